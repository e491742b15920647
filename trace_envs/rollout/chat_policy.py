"""A policy backed by a :class:`~trace_envs.llm.ChatModel`: the env's messages go in, the model's tool
calls (or text) come out as the action. The conversation is the env's own transcript
(``info["messages"]``), so the model sees exactly what the env recorded, errors included."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from trace_envs.llm.base import ChatModel, ChatResponse, Usage


class ChatPolicy:
    """One episode's conversation with a (shared) model client. Make one per concurrent episode."""

    def __init__(self, model: ChatModel, sampling: dict[str, Any] | None = None):
        self.model = model
        self.spec = model.spec
        self.sampling = dict(sampling or {})
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] | None = None
        self.usage = Usage()
        self.calls = 0
        self._last: ChatResponse | None = None

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        self.tools = list(info.get("tools") or []) or None
        self.messages = [dict(m) for m in info.get("messages") or [{"role": "user", "content": observation}]]
        self.usage, self.calls, self._last = Usage(), 0, None

    def _absorb(self, observation: str, info: dict[str, Any]) -> None:
        """Add the last step's messages (the env's record of our turn and its answer)."""
        if self._last is None:
            return
        step = info.get("messages")
        if step is not None:
            self.messages.extend(dict(m) for m in step)
            return
        self.messages.append(self._last.as_message())
        if self._last.tool_calls:
            call = self._last.tool_calls[0]
            self.messages.append({"role": "tool", "id": call.id, "name": call.name, "content": observation})
        else:
            self.messages.append({"role": "user", "content": observation})

    def _record(self, response: ChatResponse) -> str:
        self._last = response
        self.calls += 1
        self.usage = self.usage + response.usage
        return response.as_action()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._absorb(observation, info)
        return self._record(self.model.chat(self.messages, self.tools, **self.sampling))

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        self._absorb(observation, info)
        return self._record(await self.model.achat(self.messages, self.tools, **self.sampling))
