"""An LLM-simulated device user (ToolSandbox's user simulator role) on any ``ChatModel``."""

from __future__ import annotations

from typing import Any

from trace_envs.core import STOP_TOKEN, UserScript
from trace_envs.core.templates import render_template


class LLMDeviceUser:
    """Plays the user of a scenario with a chat model: opens with the scripted opening, then lets the
    model answer the agent (roles reversed: the agent's messages are the model's ``user`` turns)."""

    def __init__(self, model: Any, goal: str, script: UserScript, **sampling: Any):
        self.model = model
        self.script = script
        self.sampling = sampling
        self.system = render_template(
            "prompts/device_user.jinja", goal=goal, facts=[f.answer for f in script.facts], stop_token=STOP_TOKEN
        )
        self.history: list[dict[str, Any]] = [{"role": "assistant", "content": script.opening}]
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def start(self) -> str:
        return self.script.opening

    def reply(self, agent_message: str) -> str:
        if self._done:
            return STOP_TOKEN
        self.history.append({"role": "user", "content": agent_message})
        response = self.model.chat([{"role": "system", "content": self.system}, *self.history], **self.sampling)
        text = (response.content or "").strip() or STOP_TOKEN
        self.history.append({"role": "assistant", "content": text})
        if STOP_TOKEN in text:
            self._done = True
        return text
