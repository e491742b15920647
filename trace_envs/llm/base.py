"""The one interface every model client implements: chat messages + tool schemas in, an assistant
message with text and tool calls out, plus token usage.

Messages are plain dicts in the chat form the envs produce::

    {"role": "system" | "user", "content": str}
    {"role": "assistant", "content": str | None, "tool_calls": [{"id", "name", "arguments": {...}}]}
    {"role": "tool", "id": str, "name": str, "content": str, "error": bool}

Tool schemas are OpenAI function schemas (what ``env.reset()`` returns in ``info["tools"]``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from trace_envs.core import ToolCall, format_tool_call


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
    """One assistant turn: text and/or tool calls."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    stop_reason: str | None = None
    cached: bool = False

    def as_action(self) -> str:
        """The env action for this turn: the tool calls if any, else the text."""
        if self.tool_calls:
            return "\n".join(f"<tool_call>{format_tool_call(c)}</tool_call>" for c in self.tool_calls)
        return self.content or ""

    def as_message(self) -> dict[str, Any]:
        """This turn as a chat message dict."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls]
        return message


@runtime_checkable
class ChatModel(Protocol):
    """A chat model client. ``spec`` is its model spec string (e.g. ``anthropic:claude-…``)."""

    spec: str

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **sampling: Any,
    ) -> ChatResponse: ...

    async def achat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **sampling: Any,
    ) -> ChatResponse: ...
