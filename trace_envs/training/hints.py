"""Capability hints: the expert-guidance block a hint-prompt rollout sees, and the check that a hint never
names the env's tools or their arguments (guidance, not the answer).

TRACE's authors show a hint to 25-50% of each GRPO group and swap it back for the base prompt before the
loss; their own generated env broke the "never the calls" rule, so the rule is checked here in code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from trace_envs.core.tools import Tool

HINT_OPEN = "<expert_guidance>"
HINT_CLOSE = "</expert_guidance>"


def with_hint(system_prompt: str, hint: str) -> str:
    """The hint prompt: the base system prompt followed by the hint in an ``<expert_guidance>`` block."""
    return f"{system_prompt}\n\n{HINT_OPEN}\n{hint.strip()}\n{HINT_CLOSE}"


def _mentioned(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text, flags=re.IGNORECASE) is not None


def hint_leaks(hint: str, tools: Mapping[str, Tool]) -> list[str]:
    """The tool and argument names a hint gives away (empty: the hint is guidance only).

    A tool counts as named when its name appears as a word, with underscores or with spaces
    (``cancel_order`` or "cancel order"). An argument counts when a snake_case name appears as a word
    (``order_id``), or a one-word name appears as code: quoted, back-quoted or followed by ``=``
    (``"reason"``, ``on=``); one-word names such as ``on`` or ``date`` are also ordinary prose.
    """
    found: list[str] = []
    for name in sorted(tools):
        if _mentioned(hint, name) or ("_" in name and _mentioned(hint, name.replace("_", " "))):
            found.append(f"tool {name}")
    arguments = sorted({arg for tool in tools.values() for arg in tool.parameters.model_fields})
    for arg in arguments:
        if "_" in arg or any(ch.isdigit() for ch in arg):
            named = _mentioned(hint, arg)
        else:
            code = rf"[`'\"]{re.escape(arg)}[`'\"]|(?<![A-Za-z0-9_]){re.escape(arg)}\s*="
            named = re.search(code, hint, flags=re.IGNORECASE) is not None
        if named:
            found.append(f"argument {arg}")
    return found
