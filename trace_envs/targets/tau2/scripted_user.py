"""A scripted tau2 customer (no model): states the scenario's request, then thanks the agent and ends.

For offline runs (the demo) on tasks whose "Reason for call" and "Known info" are written in the second
person ("You want to cancel your order #W1."), as :mod:`.generated` writes them: the opening is those two
texts in the first person; any later agent message is answered with a stop. It plays no clarifying turns,
so it suits scripted agents that never ask; a real run uses an LLM user.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trace_envs.core import STOP_TOKEN
from trace_envs.llm.base import ChatResponse

_SECTION = re.compile(r"^(\t*)(Reason for call|Known info):\n((?:\1\t.*\n?)+)", re.MULTILINE)
_PERSON = [(r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou\b", "I"), (r"\byou\b", "I"),
           (r"\bYour\b", "My"), (r"\byour\b", "my")]  # fmt: skip
CLOSING = f"Thank you, that is all. {STOP_TOKEN}"


def first_person(text: str) -> str:
    """A second-person instruction in the first person ("You want your order" -> "I want my order")."""
    for pattern, replacement in _PERSON:
        text = re.sub(pattern, replacement, text)
    return text


def opening_request(system_prompt: str) -> str:
    """The customer's first message from tau2's user-simulator prompt: the reason for the call, then what
    they know, in the first person."""
    sections = {
        name: " ".join(line.strip() for line in body.splitlines()) for _, name, body in _SECTION.findall(system_prompt)
    }
    parts = [sections.get("Reason for call", "I need help with my request."), sections.get("Known info", "")]
    return "Hi! " + first_person(" ".join(p for p in parts if p))


class ScriptedCustomer:
    """A tau2 user model without a model: the request first, then :data:`CLOSING` to any agent reply."""

    spec = "scripted:customer"

    def chat(
        self, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        spoke = any(m.get("role") == "assistant" for m in messages)  # roles are flipped: our own turns
        if spoke:
            return ChatResponse(content=CLOSING)
        system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
        return ChatResponse(content=opening_request(system))

    async def achat(
        self, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self.chat(messages, tools, **sampling)
