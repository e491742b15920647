"""Extra instructions for a model policy, added to the env's system prompt without touching the env.

Prompt-optimisation baselines (GEPA) and their evaluation give a policy text such as capability instructions;
it goes after the env's own system prompt in a ``<skill_instructions>`` block (the form TRACE's GEPA
baseline used), so the policy text and tool schemas the env sends stay exactly the target's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trace_envs.core import Message

INSTRUCTIONS_TAG = "skill_instructions"
"""The tag around extra instructions in the system prompt."""


def instructions_block(instructions: str) -> str:
    """``<skill_instructions>\\n…\\n</skill_instructions>`` ('' for blank instructions)."""
    text = instructions.strip()
    return f"<{INSTRUCTIONS_TAG}>\n{text}\n</{INSTRUCTIONS_TAG}>" if text else ""


def with_instructions(messages: Sequence[Message | dict[str, Any]], instructions: str) -> list[Message]:
    """A copy of ``messages`` whose system prompt ends with the instructions block (a system message is
    put first when there is none); blank instructions change nothing."""
    out: list[Message] = [dict(m) for m in messages]  # type: ignore[misc]
    block = instructions_block(instructions)
    if not block:
        return out
    if out and out[0].get("role") == "system":
        prompt = (out[0].get("content") or "").rstrip("\n")
        out[0]["content"] = f"{prompt}\n{block}\n" if prompt else f"{block}\n"
    else:
        out.insert(0, {"role": "system", "content": f"{block}\n"})
    return out
