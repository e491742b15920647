"""The one interface every model client implements: chat messages + tool schemas in, an assistant
message with text and tool calls out, plus token usage.

Messages are plain dicts in the chat form the envs produce::

    {"role": "system" | "user", "content": str}
    {"role": "assistant", "content": str | None, "tool_calls": [{"id", "name", "arguments": {...}}]}
    {"role": "tool", "id": str, "name": str, "content": str, "error": bool}

Tool schemas are OpenAI function schemas (what ``env.reset()`` returns in ``info["tools"]``).

This package does not import ``trace_envs.core``: a response carries the model's text and its tool calls
as the provider sent them; turning them into an env action (and parsing Qwen/Hermes ``<tool_call>``
text) is the rollout layer's job (:mod:`trace_envs.rollout.chat_policy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Usage(BaseModel):
    """Tokens used by one or more requests, and their cost where the price is known."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class ChatResponse(BaseModel):
    """One assistant turn: text and/or tool calls.

    ``tool_calls`` are the provider's structured calls, raw: ``{"id", "name", "arguments"}`` with
    ``arguments`` a dict, or the JSON string an OpenAI-compatible endpoint sent (maybe malformed; the
    rollout layer reports that to the agent). A local model's calls stay in ``content`` as text."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    stop_reason: str | None = None
    cached: bool = False


@runtime_checkable
class ChatModel(Protocol):
    """A chat model client. ``spec`` is its model spec string (e.g. ``anthropic:claude-…``)."""

    spec: str

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **sampling: Any,
    ) -> ChatResponse: ...

    async def achat(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **sampling: Any,
    ) -> ChatResponse: ...
