"""What an evaluation plays: a target's tasks as episodes (env id, constructor kwargs, reset options, seed).

tau2 (``tau2``, ``tau2-airline``, ``tau2-retail``): the tasks of a split of the domain folders under a tau2
data folder, one shared env per domain (the task is a reset option). ``device``: the built-in scenarios of a
split, or the scenarios of a ``.json``/``.yaml`` file. Each task's seed is derived from its domain and id
(sha256), so a store's episode keys stay the same whatever subset of tasks a run selects.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .results import TargetInfo

TARGETS = ("tau2", "tau2-airline", "tau2-retail", "device")
TAU2_DOMAINS = {"tau2": ("airline", "retail"), "tau2-airline": ("airline",), "tau2-retail": ("retail",)}


class EvalTask(BaseModel):
    """One task of a target, as the episode that plays it."""

    task_id: str
    domain: str
    env_id: str
    seed: int
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    reset_options: dict[str, Any] = Field(default_factory=dict)


class Target(BaseModel):
    """A target's description (what ``results.json`` records) and its tasks."""

    info: TargetInfo
    tasks: list[EvalTask]

    @property
    def needs_user_model(self) -> bool:
        """tau2 tasks have a simulated customer played by a chat model; device scenarios script theirs."""
        return any(t.domain in ("airline", "retail") for t in self.tasks)


def task_seed(domain: str, task_id: str) -> int:
    """A stable seed per task (the first 4 bytes of sha256 of ``domain/task_id``)."""
    return int.from_bytes(hashlib.sha256(f"{domain}/{task_id}".encode()).digest()[:4], "big")


def load_target(
    name: str, data: str | Path | None = None, split: str | None = None, limit: int | None = None
) -> Target:
    """The tasks of target ``name`` (see the module docstring); ``limit`` keeps the first N per domain.
    A bad name, split or data path raises ``ValueError`` / ``FileNotFoundError`` naming the fix."""
    if name not in TARGETS:
        raise ValueError(f"unknown target {name!r}; expected one of: {', '.join(TARGETS)}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    if name == "device":
        return _device_target(data, split or "all", limit)
    return _tau2_target(name, data, split or "base", limit)


def _tau2_target(name: str, data: str | Path | None, split: str, limit: int | None) -> Target:
    from trace_envs.targets.tau2 import load_domain_data

    tasks: list[EvalTask] = []
    source = ""
    available = 0
    for domain in TAU2_DOMAINS[name]:
        domain_data = load_domain_data(data, domain)
        source = str(domain_data.path.parent)
        every = domain_data.task_ids(split)
        available += len(every)
        ids = every[:limit]
        env_kwargs = {"data_dir": str(domain_data.path)}
        tasks += [
            EvalTask(
                task_id=task_id,
                domain=domain,
                env_id=f"trace/tau2-{domain}-v0",
                seed=task_seed(domain, task_id),
                env_kwargs=env_kwargs,
                reset_options={"task_id": task_id},
            )
            for task_id in ids
        ]
    info = TargetInfo(
        name=name, domains=list(TAU2_DOMAINS[name]), source=source, split=split, tasks=len(tasks),
        available=available, limit=limit,
    )  # fmt: skip
    return Target(info=info, tasks=tasks)


def _device_target(data: str | Path | None, split: str, limit: int | None) -> Target:
    from trace_envs.targets.device import load_scenarios
    from trace_envs.targets.device.builtin import builtin_pool

    if split not in ("train", "test", "all"):
        raise ValueError(f"device split must be train, test or all, got {split!r}")
    tasks: list[EvalTask] = []
    if data is None:
        pool = builtin_pool(split)
        for scenario in pool[:limit]:
            tasks.append(_device_task(scenario.name, {"scenario": scenario.name}))
        available = len(pool)
    else:
        every = [s for s in load_scenarios(data) if split == "all" or s.split == split]
        available = len(every)
        for scenario in every[:limit]:
            tasks.append(
                _device_task(scenario.name, {"scenarios": [scenario.model_dump(mode="json", exclude_none=True)]})
            )
    if not tasks:
        raise ValueError(f"no device scenarios in split {split!r} of {data or 'the built-in scenarios'}")
    info = TargetInfo(
        name="device", domains=["device"], source=str(data) if data else "builtin", split=split, tasks=len(tasks),
        available=available, limit=limit,
    )  # fmt: skip
    return Target(info=info, tasks=tasks)


def _device_task(name: str, env_kwargs: dict[str, Any]) -> EvalTask:
    return EvalTask(
        task_id=name, domain="device", env_id="trace/device-v0", seed=task_seed("device", name), env_kwargs=env_kwargs
    )
