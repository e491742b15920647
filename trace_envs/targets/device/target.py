"""The device target as a :class:`~trace_envs.registry.targets.Target`: its built-in (or file) scenarios as task
records, its test scenarios for the leakage guard, and its flaw rules on a scenario's reference actions.
Imports nothing heavy at its top: the registry imports it when first read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_envs.registry.targets import LeakageRecords, LeakageTask, Target, TargetTask, TargetTasks, task_seed


@dataclass(frozen=True, kw_only=True)
class DeviceTarget(Target):
    """ToolSandbox-style device scenarios: built in (or a scenario file), scripted users, scored by milestones."""

    def tasks(self, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
        """The built-in scenarios of ``split``, or the scenarios of a ``.json``/``.yaml`` file ``data``."""
        from .builtin import builtin_pool
        from .scenario import load_scenarios

        if split not in self.splits:
            raise ValueError(
                f"{self.name} split must be {', '.join(self.splits[:-1])} or {self.splits[-1]}, got {split!r}"
            )
        kwargs: list[tuple[str, dict[str, Any]]]
        if data is None:
            pool = list(builtin_pool(split))
            kwargs = [(s.name, {"scenario": s.name}) for s in pool[:limit]]
        else:
            pool = [s for s in load_scenarios(data) if split == "all" or s.split == split]
            kwargs = [(s.name, {"scenarios": [s.model_dump(mode="json", exclude_none=True)]}) for s in pool[:limit]]
        if not kwargs:
            raise ValueError(f"no {self.name} scenarios in split {split!r} of {data or 'the built-in scenarios'}")
        env_id = next(iter(self.envs))
        domain = next(iter(self.domains))
        tasks = [
            TargetTask(task_id=name, domain=domain, env_id=env_id, seed=task_seed(domain, name), env_kwargs=env_kwargs)
            for name, env_kwargs in kwargs
        ]
        return TargetTasks(source=str(data) if data else "builtin", split=split, tasks=tasks, available=len(pool))

    def leakage(self, data: str | Path | None) -> LeakageRecords:
        """The built-in scenarios of the ``test`` split (what an evaluation plays)."""
        return _records(self.name)

    def flawed(self, env: Any, capabilities: Sequence[str] | None) -> list[str] | None:
        """The scenario's reference actions with the named capabilities' device deficits applied; ``None`` when
        none of them has a device rule (the env's own reference or flawed solution plays)."""
        from trace_envs.registry.capabilities import flaw_rules

        from .flaws import KIND, device_actions

        if not capabilities or not any(c in flaw_rules(KIND) for c in capabilities):
            return None
        return device_actions(self.oracle(env), capabilities)


DEVICE = DeviceTarget(
    name="device",
    description="ToolSandbox-style device scenarios (built in, or a scenario file), scored by milestones.",
    domains={"device": "trace_envs.domains.device:DEVICE"},
    envs={"trace/device-v0": "trace_envs.targets.device.env:DeviceEnv"},
    kit=("trace_envs.core", "trace_envs.domains.device"),
    helpers=("trace_envs.domains.device:generate_device_world", "trace_envs.domains.device.world:random_phone"),
    default_split="all",
    splits=("train", "test", "all"),
    builtin_tasks=True,
    similarity="similarity",
    env_kind="device_target",
)


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
