"""A Text space for any Unicode string, and correct vector-env shared memory for it.

Gymnasium's ``Text`` only contains strings over a fixed charset, and its shared-memory path
(``AsyncVectorEnv(shared_memory=True)``, the default of ``make_vec(..., "async")``) stores charset
indices, so any other character is silently dropped. Agent text is arbitrary Unicode, so
``UnicodeText`` accepts every string up to ``max_length`` characters and ships UTF-8 bytes
through shared memory instead.
"""

from __future__ import annotations

import multiprocessing as mp
import string
from collections.abc import Sequence
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

MAX_TEXT_LENGTH = 1 << 17
"""Largest observation or action, in characters; longer observations are truncated."""

_SAMPLE_CHARS = string.ascii_letters + string.digits + string.punctuation + " \n" + "éüßñçøΩπλ→✓中文日本語한국어"
_HEADER_BYTES = 4


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

    @property
    def max_bytes(self) -> int:
        """Bytes one value may need in UTF-8 (four per character at most)."""
        return 4 * self.max_length


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array("B", n * (_HEADER_BYTES + space.max_bytes))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    data = value.encode("utf-8")
    slot = _HEADER_BYTES + space.max_bytes
    buffer = np.frombuffer(shared_memory.get_obj(), dtype=np.uint8)
    start = index * slot
    buffer[start : start + _HEADER_BYTES] = np.frombuffer(len(data).to_bytes(_HEADER_BYTES, "little"), np.uint8)
    buffer[start + _HEADER_BYTES : start + _HEADER_BYTES + len(data)] = np.frombuffer(data, np.uint8)


class LiveTextBatch(Sequence[str]):
    """Strings read from shared memory each time they are accessed.

    ``AsyncVectorEnv`` reads its observation buffer once, at construction, and relies on the
    result being a live view (true for numpy arrays). A tuple of strings would be a stale
    snapshot, so this sequence decodes the current bytes on access; copying it (``deepcopy``,
    which ``AsyncVectorEnv`` does by default) gives a plain tuple.
    """

    def __init__(self, space: UnicodeText, shared_memory: Any, n: int):
        self._space, self._memory, self._n = space, shared_memory, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(index)
        slot = _HEADER_BYTES + self._space.max_bytes
        buffer = np.frombuffer(self._memory.get_obj(), dtype=np.uint8)
        start = (index % self._n) * slot
        size = int.from_bytes(buffer[start : start + _HEADER_BYTES].tobytes(), "little")
        return buffer[start + _HEADER_BYTES : start + _HEADER_BYTES + size].tobytes().decode("utf-8")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> LiveTextBatch:
    return LiveTextBatch(space, shared_memory, n)


def clip_text(text: str, max_length: int = MAX_TEXT_LENGTH) -> str:
    """Truncate text to fit the space, saying so at the end."""
    if len(text) <= max_length:
        return text
    marker = "\n…[truncated]"
    return text[: max_length - len(marker)] + marker
