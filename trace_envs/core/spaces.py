"""A Text space for any Unicode string.

Gymnasium's ``Text`` only contains strings over a fixed charset; agent text is arbitrary Unicode, so
``UnicodeText`` accepts every string up to ``max_length`` characters. Its shared-memory layout for async
vector envs (UTF-8 bytes) is :mod:`trace_envs.vector`, registered by ``import trace_envs``.
"""

from __future__ import annotations

from string import ascii_letters, digits, punctuation
from typing import Any

from gymnasium.spaces import Text

MAX_TEXT_LENGTH = 1 << 17
"""Largest observation or action, in characters; longer observations are truncated."""

_SAMPLE_CHARS = ascii_letters + digits + punctuation + " \n" + "éüßñçøΩπλ→✓中文日本語한국어"


class UnicodeText(Text):
    """Any ``str`` of at most ``max_length`` characters (Unicode, newlines and all)."""

    def __init__(self, max_length: int = MAX_TEXT_LENGTH, *, min_length: int = 0, seed: int | None = None):
        super().__init__(max_length=max_length, min_length=min_length, charset=_SAMPLE_CHARS, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """Random text from a mixed ASCII/Unicode alphabet, short enough to be useful as an action."""
        length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
        picks = self.np_random.integers(0, len(_SAMPLE_CHARS), size=length)
        return "".join(_SAMPLE_CHARS[i] for i in picks)

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.min_length, self.max_length))


def clip_text(text: str, max_length: int = MAX_TEXT_LENGTH) -> str:
    """Truncate text to fit the space, saying so at the end."""
    if len(text) <= max_length:
        return text
    marker = "\n…[truncated]"
    return text[: max_length - len(marker)] + marker
