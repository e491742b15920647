"""A scripted customer for tau2 tasks, so scripted policies (the gold policy, flawed baselines) are
evaluated offline: it asks for help, then thanks the agent and ends the call. Its words are the same for
every task, so it is no stand-in for tau2's model-played user when a model is the agent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trace_envs.core import STOP_TOKEN
from trace_envs.llm.base import ChatResponse

SCRIPTED_USER = "scripted"
"""The ``--user-model`` value that selects :class:`ScriptedCustomer`."""


class ScriptedCustomer:
    """A ``ChatModel`` that opens with a request for help and stops at its next turn."""

    spec = "scripted:customer"

    def chat(
        self, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        """The user's next line: it has spoken once (its opening) when the agent's second message arrives."""
        spoken = sum(1 for m in messages if m.get("role") == "assistant")
        text = (
            "Hi, I need help with a request on my account." if spoken == 0 else f"Thank you, that is all. {STOP_TOKEN}"
        )
        return ChatResponse(content=text)

    async def achat(
        self, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self.chat(messages, tools, **sampling)
