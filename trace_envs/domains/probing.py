"""What a capability's offline probe reads and answers: the episode's calls with their results, user and agent
texts (read from its messages), and its NA / PRESENT / LACKING label.

Plain data built from the message list every env of ours produces (``info["messages"]``, the trajectory store's
``messages``). A probe is declared on its env's :class:`~trace_envs.core.Capability` (``probe=``) and run by
analysis (:mod:`trace_envs.analysis.probes`); it lives with the env, so this view sits beside the env kits.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol


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


class ProbeLabel(NamedTuple):
    """A probe's answer: NA (not needed), PRESENT (needed and shown) or LACKING (needed, not shown), and why."""

    label: Literal["NA", "PRESENT", "LACKING"]
    rationale: str


class LabelLike(Protocol):
    """Anything with a ``label`` (NA / PRESENT / LACKING) and a one-line ``rationale``."""

    @property
    def label(self) -> str: ...

    @property
    def rationale(self) -> str: ...


class Probe(Protocol):
    """Labels one episode offline from what the agent did (never the env id, task or outcome)."""

    def __call__(self, episode: Episode, /) -> LabelLike: ...
