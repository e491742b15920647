"""A policy backed by a :class:`~trace_envs.llm.ChatModel`: the env's messages go in, the model's tool
calls (or text) come out as the action. The conversation is the env's own transcript
(``info["messages"]``), so the model sees exactly what the env recorded, errors included.

Model clients return raw output (text, and the provider's tool calls as sent); :func:`model_turn` turns
it into core's types here, so that ``trace_envs.llm`` needs nothing of ``trace_envs.core``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from trace_envs.core import Message, ToolCall, format_tool_call, parse_action
from trace_envs.llm.base import ChatModel, ChatResponse, Usage

from .instructions import with_instructions


@dataclass
class ModelTurn:
    """One model answer in core's terms: its tool calls (parsed and valid) or its text."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)

    @property
    def action(self) -> str:
        """The env action: the tool calls as ``<tool_call>`` blocks if any, else the text."""
        if self.tool_calls:
            return "\n".join(f"<tool_call>{format_tool_call(c)}</tool_call>" for c in self.tool_calls)
        return self.content or ""

    @property
    def message(self) -> Message:
        """This turn as a chat message."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls]
        return message


def model_turn(response: ChatResponse) -> ModelTurn:
    """A response's tool calls parsed with :func:`~trace_envs.core.parse_action`.

    Structured calls (Anthropic, OpenAI-compatible) are validated; if one is malformed (e.g. arguments that
    are not JSON), the turn becomes text with every call as a ``<tool_call>`` block, so the env reports
    the error to the agent. Without structured calls, tool calls written in the text (a local model's
    Qwen/Hermes ``<tool_call>`` blocks, or bare JSON) are parsed out of it; otherwise the text is a message.
    """
    if response.tool_calls:
        calls: list[ToolCall] = []
        broken: list[str] = []
        for raw in response.tool_calls:
            parsed = parse_action(raw)
            if parsed.errors:
                arguments = raw.get("arguments")
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                broken.append(f'<tool_call>{{"name": {json.dumps(raw.get("name"))}, "arguments": {text}}}</tool_call>')
            calls.extend(parsed.tool_calls)
        if broken:
            return ModelTurn(content="\n".join([*(c for c in [response.content] if c), *broken]))
        return ModelTurn(content=response.content, tool_calls=calls)
    text = response.content or ""
    parsed = parse_action(text)
    if parsed.tool_calls and not parsed.errors:
        return ModelTurn(content=parsed.content, tool_calls=parsed.tool_calls)
    return ModelTurn(content=response.content)


def _messages(info: dict[str, Any]) -> list[Message] | None:
    """The env's transcript entries in ``info`` (``None``: the env records none)."""
    messages: list[Message] | None = info.get("messages")
    return messages


class ChatPolicy:
    """One episode's conversation with a (shared) model client. Make one per concurrent episode.

    ``instructions`` (e.g. capability instructions a prompt optimiser wrote) are added to the env's system
    prompt in a ``<skill_instructions>`` block (see :mod:`trace_envs.rollout.instructions`)."""

    def __init__(self, model: ChatModel, sampling: dict[str, Any] | None = None, instructions: str = ""):
        self.model = model
        self.spec = model.spec
        self.sampling = dict(sampling or {})
        self.instructions = instructions
        self.messages: list[Message] = []
        self.tools: list[dict[str, Any]] | None = None
        self.usage = Usage()
        self.calls = 0
        self._last: ModelTurn | None = None

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        self.tools = list(info.get("tools") or []) or None
        opening: list[Message] = [{"role": "user", "content": observation}]
        self.messages = with_instructions(_messages(info) or opening, self.instructions)
        self.usage, self.calls, self._last = Usage(), 0, None

    def _absorb(self, observation: str, info: dict[str, Any]) -> None:
        """Add the last step's messages (the env's record of our turn and its answer)."""
        if self._last is None:
            return
        step = _messages(info)
        if step is not None:
            self.messages.extend(m.copy() for m in step)
            return
        self.messages.append(self._last.message)
        if self._last.tool_calls:
            call = self._last.tool_calls[0]
            self.messages.append({"role": "tool", "id": call.id, "name": call.name, "content": observation})
        else:
            self.messages.append({"role": "user", "content": observation})

    def _record(self, response: ChatResponse) -> str:
        self._last = model_turn(response)
        self.calls += 1
        self.usage = self.usage + response.usage
        return self._last.action

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._absorb(observation, info)
        return self._record(self.model.chat(self.messages, self.tools, **self.sampling))

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        self._absorb(observation, info)
        return self._record(await self.model.achat(self.messages, self.tools, **self.sampling))
