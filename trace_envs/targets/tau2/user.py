"""The LLM-played user of a tau2 task: tau2's user-simulator prompt over any :class:`ChatModel`.

System prompt = the guidelines file (read from the user's tau2 data, never shipped) + the task's
scenario, as tau2 builds it. The model sees the conversation with roles flipped (agent texts are
``user`` messages, its own replies ``assistant``); agent tool calls and results are not shown to it.
"""

from __future__ import annotations

from typing import Any

from trace_envs.core.templates import render_template
from trace_envs.llm.base import ChatModel

GREETING = "Hi! How can I help you today?"
"""The fixed first agent message of every tau2 conversation."""
USER_STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""Any of these in a user message ends the conversation (termination ``user_stop``)."""


def user_system_prompt(guidelines: str, scenario: str) -> str:
    """``{guidelines}\\n\\n<scenario>\\n{scenario}\\n</scenario>``, exactly as tau2's user simulator."""
    return render_template("prompts/tau2_user_system.jinja", guidelines=guidelines, scenario=scenario)


class Tau2LLMUser:
    """A simulated customer following one task's scenario; implements the core ``User`` protocol."""

    def __init__(self, model: ChatModel, scenario: str, guidelines: str, **sampling: Any):
        self.model = model
        self.system_prompt = user_system_prompt(guidelines, scenario)
        self.sampling = {"temperature": 0.0, **sampling}
        self.history: list[dict[str, Any]] = []
        self.stop_token: str | None = None

    @property
    def done(self) -> bool:
        return self.stop_token is not None

    def start(self) -> str:
        """The user's first message: its reply to the agent's fixed greeting."""
        return self.reply(GREETING)

    def reply(self, agent_message: str) -> str:
        self.history.append({"role": "user", "content": agent_message})
        response = self.model.chat([{"role": "system", "content": self.system_prompt}, *self.history], **self.sampling)
        text = response.content or ""
        self.history.append({"role": "assistant", "content": text})
        self.stop_token = next((token for token in USER_STOP_TOKENS if token in text), None)
        return text
