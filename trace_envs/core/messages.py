"""``Message``: one entry of an episode's transcript, in the chat form every env records and every
model client reads (``info["messages"]``, ``ConversationEnv.messages``)."""

from __future__ import annotations

from typing import Any, Literal, Required, TypedDict

Role = Literal["system", "user", "assistant", "tool"]


class ToolCallEntry(TypedDict):
    """One tool call of an assistant message (its id is assigned by the env when the model gave none)."""

    id: str
    name: str
    arguments: dict[str, Any]


class Message(TypedDict, total=False):
    """A chat message. ``role`` is always there; the other keys depend on it::

    {"role": "system" | "user", "content": str}
    {"role": "user", "content": "Error: ...", "error": True}  # an error observation
    {"role": "assistant", "content": str | None, "tool_calls": [ToolCallEntry, ...]}
    {"role": "assistant", "content": "<tool_call>{oops", "invalid": True}  # an unparseable action
    {"role": "tool", "id": str, "name": str, "content": str, "error": bool}
    """

    role: Required[Role]
    content: str | None
    tool_calls: list[ToolCallEntry]
    id: str
    name: str
    error: bool
    invalid: bool
