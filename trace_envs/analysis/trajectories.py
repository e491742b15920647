"""What the analyst sees of an episode: an opaque id, and a compact transcript (user and agent
messages, tool calls with their arguments, tool results and errors) truncated to a token budget.

Nothing that names the env, the policy, the task id or the env's capability is shown: those would
give the answer away (``flawed:precondition_verification`` …).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import Any

from trace_envs.rollout.store import EpisodeRecord

CHARS_PER_TOKEN = 4
"""Rough size estimate used for budgets (English and JSON average about four characters a token)."""


def episode_id(record: EpisodeRecord) -> str:
    """A stable, opaque id of an episode (a hash of its store key), safe to show to the analyst."""
    key = json.dumps(list(record.key), ensure_ascii=False)
    return "ep-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def estimate_tokens(text: str) -> int:
    """Approximate token count of ``text``."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 20)] + f" …[+{len(text) - limit + 20} chars]"


def _arguments(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def transcript_lines(record: EpisodeRecord, *, result_chars: int = 1200, system_chars: int = 0) -> list[str]:
    """One line per message: ``USER:``, ``AGENT:``, ``AGENT CALLS name({...})``, ``TOOL name:`` /
    ``TOOL name ERROR:``. The system prompt is left out unless ``system_chars`` > 0."""
    lines: list[str] = []
    names: dict[str, str] = {}
    for message in record.messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            if system_chars and content:
                lines.append(f"SYSTEM (policy, clipped): {_clip(str(content), system_chars)}")
        elif role == "user":
            lines.append(f"USER: {content or ''}")
        elif role == "assistant":
            if content:
                lines.append(f"AGENT: {content}")
            for call in message.get("tool_calls") or []:
                names[str(call.get("id", ""))] = str(call.get("name", ""))
                lines.append(f"AGENT CALLS {call.get('name')}({_arguments(call.get('arguments') or {})})")
        elif role == "tool":
            name = message.get("name") or names.get(str(message.get("id", "")), "tool")
            tag = f"TOOL {name} ERROR" if message.get("error") else f"TOOL {name}"
            lines.append(f"{tag}: {_clip(str(content or ''), result_chars)}")
    return lines


def render_trajectory(record: EpisodeRecord, *, token_budget: int = 6000, show_outcome: bool = True) -> str:
    """The transcript as text, at most about ``token_budget`` tokens: long tool results are clipped
    first, then the middle of the conversation is elided (the opening and the ending stay)."""
    limit = token_budget * CHARS_PER_TOKEN
    header = f"Trajectory {episode_id(record)}"
    if show_outcome:
        header += f" — outcome: {'SUCCESS' if record.success else 'FAILURE'} (reward {record.reward:.2f})"
    for result_chars in (1200, 600, 250, 100):
        lines = transcript_lines(record, result_chars=result_chars)
        text = "\n".join([header, *lines])
        if len(text) <= limit:
            return text
    head, tail = [header], list(lines)
    budget = limit - len(header) - 60
    front: list[str] = []
    back: list[str] = []
    while tail and budget > 0:
        line = tail.pop(0) if len(front) <= len(back) else tail.pop()
        if len(line) + 1 > budget:
            break
        budget -= len(line) + 1
        if len(front) <= len(back):
            front.append(line)
        else:
            back.insert(0, line)
    elided = len(lines) - len(front) - len(back)
    middle = [f"… [{elided} messages elided to fit the budget] …"] if elided else []
    return "\n".join([*head, *front, *middle, *back])


def sample_for_discovery(
    records: Sequence[EpisodeRecord], *, token_budget: int, per_trajectory: int, seed: int = 0
) -> list[str]:
    """Rendered trajectories for discovery: failures and successes alternated (failures first, as
    they carry the deficits), each group shuffled with ``random.Random(seed)``, until the budget
    is spent."""
    rng = random.Random(seed)
    failures = [r for r in records if not r.success]
    successes = [r for r in records if r.success]
    rng.shuffle(failures)
    rng.shuffle(successes)
    order: list[EpisodeRecord] = []
    while failures or successes:
        for group in (failures, failures, successes):
            if group:
                order.append(group.pop(0))
    rendered, used = [], 0
    for record in order:
        text = render_trajectory(record, token_budget=per_trajectory)
        cost = estimate_tokens(text)
        if used + cost > token_budget:
            continue
        rendered.append(text)
        used += cost
    return rendered
