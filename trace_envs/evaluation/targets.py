"""What an evaluation plays: a target's tasks as episodes (env id, constructor kwargs, reset options, seed).

A name selects registered targets (:mod:`trace_envs.registry.targets`): one target by name or alias
(``retail``, ``tau2-retail``, ``device``) or a family at once (``tau2``: airline and retail). Each target lists
its own tasks (tau2: a split of the domain folder under a data folder, one shared env per domain with the
task a reset option; device: the built-in scenarios of a split, or a ``.json``/``.yaml`` file's). Each task's
seed is derived from its domain and id (sha256), so a store's episode keys stay the same whatever subset of
tasks a run selects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trace_envs.registry.targets import TargetTask, select_targets, task_seed

from .results import TargetInfo

EvalTask = TargetTask
"""One task of a target, as the episode that plays it (the registry's plain record)."""


class Target(BaseModel):
    """A target's description (what ``results.json`` records) and its tasks."""

    info: TargetInfo
    tasks: list[EvalTask]
    needs_user_model: bool = False
    """Its tasks have a simulated user played by a chat model (tau2's customer); else a scripted one."""

    def default_user(self) -> Any:
        """Who plays its tasks' user when no chat model is given: the first selected target's default user
        (``None``: its tasks script their own)."""
        return next((u for s in select_targets(self.info.name) if (u := s.default_user()) is not None), None)


def load_target(
    name: str, data: str | Path | None = None, split: str | None = None, limit: int | None = None
) -> Target:
    """The tasks of target ``name`` (see the module docstring); ``limit`` keeps the first N per domain.
    A bad name, split or data path raises ``ValueError`` / ``FileNotFoundError`` naming the fix."""
    specs = select_targets(name)
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    tasks: list[EvalTask] = []
    source, chosen = "", split or specs[0].default_split
    counts: list[int | None] = []
    for spec in specs:
        found = spec.load_tasks(data, split, limit)
        tasks += found.tasks
        source, chosen = found.source, found.split
        counts.append(found.available)
    available = None if None in counts else sum(count or 0 for count in counts)
    info = TargetInfo(
        name=name, domains=[d for s in specs for d in s.domains], source=source, split=chosen, tasks=len(tasks),
        available=available, limit=limit,
    )  # fmt: skip
    return Target(info=info, tasks=tasks, needs_user_model=any(s.needs_user_model for s in specs))


__all__ = ["EvalTask", "Target", "load_target", "task_seed"]
