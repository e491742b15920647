"""Scripted oracle and flawed action lists for tau2 target tasks, built from each task's gold actions.

A capability deficit is applied to the gold tool calls, so a ``flawed:<capability>`` baseline fails
on a target task the way an agent lacking that capability would. Each capability's declaration names its
rule (``Capability(flaws={"tau2": rule})``, read through :mod:`trace_envs.registry.capabilities`); the shipped rules
are shared by several capabilities and live in :mod:`trace_envs.domains.tau2_flaws`. Capabilities without a
tau2 rule (device-side ones) leave the gold actions as they are.
"""

from __future__ import annotations

import hashlib
import random
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from trace_envs.core import STOP_TOKEN, ToolCall, format_tool_call
from trace_envs.domains.tau2_flaws import (
    StateIndex,
    near_miss_argument,
    skip_lookups_before_write,
    stop_after_first_write,
)

IsWrite = Callable[[str], bool]
KIND = "tau2"
"""The key of a capability's rule for tau2 gold actions in its ``flaws``."""


def gold_calls(task: Any) -> list[ToolCall]:
    """The task's gold tool calls made by the assistant, in order."""
    return [
        ToolCall(name=a.name, arguments=dict(a.arguments))
        for a in task.gold_actions
        if getattr(a, "requestor", "assistant") == "assistant"
    ]


def closing_message(task: Any) -> str:
    """A final message that tells the user every fact the task requires (its communicate info)."""
    info = (task.evaluation_criteria.communicate_info or []) if task.evaluation_criteria else []
    return ("To confirm: " + "; ".join(str(i) for i in info) + ".") if info else "Your request has been handled."


def tau2_deficits() -> list[str]:
    """Capabilities whose declaration has a rule for tau2 gold actions."""
    from trace_envs.registry.capabilities import flaw_rules

    return list(flaw_rules(KIND))


def task_rng(task_id: str) -> random.Random:
    """A per-task RNG (seeded from the task id's sha256, the same in every process)."""
    return random.Random(int(hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:16], 16))


def tau2_actions(task: Any, is_write: IsWrite, state: Any, capabilities: Sequence[str] = ()) -> list[str]:
    """Gold tool calls with the named capabilities' deficits applied (each distinct rule once, in the order
    named), a closing message with the facts to tell, then the stop token. No capabilities: the oracle."""
    calls = gold_calls(task)
    if capabilities:
        from trace_envs.registry.capabilities import flaw_rules

        rules = flaw_rules(KIND)
        rng = task_rng(task.id)
        for rule in dict.fromkeys(rules[c] for c in capabilities if c in rules):
            calls = rule(calls, is_write, state, rng)
    return [*(format_tool_call(c) for c in calls), closing_message(task), STOP_TOKEN]


def tau2_env_actions(env: Any, capabilities: Sequence[str] = ()) -> list[str]:
    """:func:`tau2_actions` for the current task of a reset tau2 target env."""
    return tau2_actions(env.task, env.toolset.mutates, _state_for(env, capabilities), capabilities)


def _state_for(env: Any, capabilities: Sequence[str]) -> Any:
    """What the named capabilities' rules read of the env's database: nothing for the rules that ignore it,
    the cached :class:`StateIndex` when the only other rule is :func:`near_miss_argument`, else its JSON."""
    if not capabilities:
        return None
    from trace_envs.registry.capabilities import flaw_rules

    rules = flaw_rules(KIND)
    named = {rules[c] for c in capabilities if c in rules} - {skip_lookups_before_write, stop_after_first_write}
    if not named:
        return None
    if named == {near_miss_argument}:
        return _reset_state_index(env)
    return env.domain.dump_state(env.db)


_INDEXES: weakref.WeakKeyDictionary[Any, tuple[Any, StateIndex]] = weakref.WeakKeyDictionary()


def _reset_state_index(env: Any) -> StateIndex:
    """The :class:`StateIndex` of a reset env's database, built once per env: a target env restores its
    database to the loaded state at every reset, so while nothing is written (``db.dirty`` false) the
    state is the one indexed before. Walking the whole airline database costs about 0.3 s per episode."""
    db = env.db
    pristine = getattr(db, "dirty", True) is False
    cached = _INDEXES.get(env)
    if pristine and cached is not None and cached[0] is db:
        return cached[1]
    index = StateIndex.of(env.domain.dump_state(db))
    if pristine:
        _INDEXES[env] = (db, index)
    return index
