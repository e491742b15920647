"""What the agent did in an episode, read from its messages: calls with their results, user and agent texts.

The view a capability's probe reads (see :class:`~trace_envs.core.capability.Probe`): plain data built from
the message list every env of ours produces (``info["messages"]``, the trajectory store's ``messages``).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Call:
    """One tool call with its result, in episode order."""

    index: int
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    error: bool = False
    parsed: Any = None


@dataclass
class Episode:
    """The parts of an episode a probe reads."""

    calls: list[Call] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    agent_texts: list[tuple[int, str]] = field(default_factory=list)  # (calls made before it, text)

    @property
    def user_text(self) -> str:
        return "\n".join(self.user_texts)


def parse_result(text: str | None) -> Any:
    """A tool result as data: JSON, else a Python literal (the device domain prints results with repr)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def read_messages(messages: Iterable[Mapping[str, Any]]) -> Episode:
    """Calls (with results matched by id), user messages and agent messages, in order."""
    episode = Episode()
    by_id: dict[str, Call] = {}
    for message in messages:
        role = message.get("role")
        if role == "user":
            episode.user_texts.append(str(message.get("content") or ""))
        elif role == "assistant":
            if message.get("content"):
                episode.agent_texts.append((len(episode.calls), str(message["content"])))
            for raw in message.get("tool_calls") or []:
                call = Call(len(episode.calls), str(raw.get("name", "")), dict(raw.get("arguments") or {}))
                episode.calls.append(call)
                by_id[str(raw.get("id", ""))] = call
        elif role == "tool":
            target = by_id.get(str(message.get("id", "")))
            if target is not None:
                target.result = None if message.get("content") is None else str(message.get("content"))
                target.error = bool(message.get("error"))
                target.parsed = parse_result(target.result)
    return episode
