"""Deficit rules on a device scenario's reference actions, declared by the capabilities they plant.

The device target's own capability is ``device_tool_use``, so ``flawed:<capability>`` would play the reference
everywhere there. These rules plant the two device-side deficits of the TRACE paper on the reference actions,
so that a scripted base agent fails exactly where the capability is needed (and the offline probes see it):

- :func:`give_up_after_blocked_call` (permission-error recovery): the reference retries a call after unblocking
  it (the call appears twice); the flawed agent stops after the first, blocked attempt and apologises.
- :func:`date_arithmetic_in_head` (date-time reasoning): the agent skips the date-conversion tools and works the
  dates out itself, a day off (every timestamp argument after the first skipped call is shifted by one day, and
  a day count it tells the user is one too many).

Scenarios that need neither capability keep their reference actions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from trace_envs.core import parse_action

DeviceFlaw = Callable[[list[str]], list[str]]

GIVE_UP = "Sorry, I could not do that: the phone reported an error."
DATE_TOOLS = frozenset(
    {"timestamp_to_datetime_info", "datetime_info_to_timestamp", "timestamp_diff", "shift_timestamp"}
)
"""Tools that convert or compare dates: what an agent lacking date-time reasoning skips."""
DAY_S = 86_400.0
_DAY_COUNT = re.compile(r"\b(\d+) days\b")


def _call(action: str) -> dict[str, Any] | None:
    """The single tool call an action string holds (``{"name", "arguments"}``), else ``None``."""
    parsed = parse_action(action)
    if len(parsed.tool_calls) != 1 or parsed.errors:
        return None
    call = parsed.tool_calls[0]
    return {"name": call.name, "arguments": dict(call.arguments)}


def give_up_after_blocked_call(actions: list[str]) -> list[str]:
    """Keep the actions up to the first tool call that the reference makes again later (the blocked attempt),
    then apologise instead of unblocking and retrying."""
    for index, action in enumerate(actions):
        if _call(action) is not None and action in actions[index + 1 :]:
            return [*actions[: index + 1], GIVE_UP]
    return actions


def date_arithmetic_in_head(actions: list[str]) -> list[str]:
    """Drop the date-conversion calls, shift every later timestamp argument by one day and add one to a day
    count told to the user (mental date arithmetic gone wrong)."""
    first = next((i for i, a in enumerate(actions) if (c := _call(a)) is not None and c["name"] in DATE_TOOLS), None)
    if first is None:
        return actions
    out = list(actions[:first])
    for action in actions[first:]:
        call = _call(action)
        if call is None:
            out.append(_DAY_COUNT.sub(lambda m: f"{int(m.group(1)) + 1} days", action, count=1))
            continue
        if call["name"] in DATE_TOOLS:
            continue
        arguments = {
            name: value + DAY_S if "timestamp" in name and _is_number(value) else value
            for name, value in call["arguments"].items()
        }
        out.append(json.dumps({"name": call["name"], "arguments": arguments}, ensure_ascii=False))
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
