"""What the device target tells the target registry: its built-in (or file) scenarios as task records, its
test scenarios for the leakage guard, and its flaw rules on a scenario's reference actions."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_envs.targets.registry import LeakageRecords, LeakageTask, TargetSpec, TargetTask, TargetTasks, task_seed


def load_tasks(spec: TargetSpec, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
    """The built-in scenarios of ``split``, or the scenarios of a ``.json``/``.yaml`` file ``data``."""
    from .builtin import builtin_pool
    from .scenario import load_scenarios

    if split not in spec.splits:
        raise ValueError(f"{spec.name} split must be {', '.join(spec.splits[:-1])} or {spec.splits[-1]}, got {split!r}")
    kwargs: list[tuple[str, dict[str, Any]]]
    if data is None:
        pool = list(builtin_pool(split))
        kwargs = [(s.name, {"scenario": s.name}) for s in pool[:limit]]
    else:
        pool = [s for s in load_scenarios(data) if split == "all" or s.split == split]
        kwargs = [(s.name, {"scenarios": [s.model_dump(mode="json", exclude_none=True)]}) for s in pool[:limit]]
    if not kwargs:
        raise ValueError(f"no {spec.name} scenarios in split {split!r} of {data or 'the built-in scenarios'}")
    env_id = next(iter(spec.envs))
    domain = next(iter(spec.domains))
    tasks = [
        TargetTask(task_id=name, domain=domain, env_id=env_id, seed=task_seed(domain, name), env_kwargs=env_kwargs)
        for name, env_kwargs in kwargs
    ]
    return TargetTasks(source=str(data) if data else "builtin", split=split, tasks=tasks, available=len(pool))


def leakage_records(spec: TargetSpec, data: str | Path | None = None) -> LeakageRecords:
    """The built-in scenarios of the ``test`` split (what an evaluation plays)."""
    return _records(spec.name)


@lru_cache(maxsize=1)
def _records(name: str) -> LeakageRecords:
    from trace_envs.core import ToolCall

    from .builtin import builtin_pool

    scenarios = builtin_pool("test")
    tasks = tuple(
        LeakageTask(
            where=f"{name} evaluation scenario {scenario.name}",
            ids=(scenario.name,),
            task_ids=(scenario.name,),
            texts=(scenario.user_goal, scenario.user.opening),
            values=tuple(step.arguments for step in scenario.reference_solution if isinstance(step, ToolCall)),
        )
        for scenario in scenarios
    )
    return LeakageRecords(source=f"built-in {name} scenarios, test split ({len(scenarios)} scenarios)", tasks=tasks)


def flawed_actions(env: Any, capabilities: Sequence[str] | None) -> list[str] | None:
    """The scenario's reference actions with the named capabilities' device deficits applied; ``None`` when
    none of them has a device rule (the env's own reference or flawed solution plays)."""
    from trace_envs.capabilities import flaw_rules

    from .flaws import KIND, device_actions

    if not capabilities or not any(c in flaw_rules(KIND) for c in capabilities):
        return None
    return device_actions(env.oracle_actions(), capabilities)
