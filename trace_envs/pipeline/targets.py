"""The pipeline's targets as episode jobs: each registered target lists its tasks (built in, the user's data,
or generated stand-in data written into the rollout folder), played as the evaluation plays them
(:func:`trace_envs.rollout.task_jobs`), and its default user plays the ones that need a simulated user when
no user model is configured."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from trace_envs.registry.targets import Target, target
from trace_envs.rollout import EpisodeJob, task_jobs

from .config import PipelineConfig

GENERATED_DATA = "data"
"""Folder of the rollout stage holding generated stand-in data (when no ``data`` is given)."""


def data_folder(config: PipelineConfig, rollout_dir: Path) -> Path:
    """The data folder of the targets that need one: the user's, or the generated one."""
    return config.data if config.data is not None else rollout_dir / GENERATED_DATA


def data_root(config: PipelineConfig, spec: Target, rollout_dir: Path) -> Path | None:
    """Where ``spec``'s tasks come from: :func:`data_folder`, or ``None`` (its built-in tasks)."""
    return None if spec.builtin_tasks else data_folder(config, rollout_dir)


def prepare_data(config: PipelineConfig, rollout_dir: Path) -> None:
    """Write generated stand-in data for the targets that need data when no data folder is given (kept
    across resumes)."""
    if config.data is not None:
        return
    for name in config.targets:
        target(name).write_data(rollout_dir / GENERATED_DATA, seed=config.seed)


def _pick(items: list[Any], limit: int | None, seed: int) -> list[Any]:
    """At most ``limit`` of ``items``, a seeded choice kept in the items' order."""
    if limit is None or limit >= len(items):
        return items
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


def target_jobs(config: PipelineConfig, spec: Target, rollout_dir: Path) -> list[EpisodeJob]:
    """One job per (task, sample) of a seeded choice of ``spec``'s tasks."""
    section = config.rollout
    found = spec.load_tasks(data_root(config, spec, rollout_dir), section.split)
    return task_jobs(_pick(found.tasks, section.max_tasks, config.seed), section.samples)


def simulated_user(config: PipelineConfig, spec: Target) -> Any:
    """Who plays the user of ``spec``'s tasks: for a target whose user is a chat model, the configured model,
    else the target's default user; ``None`` for a target that scripts its own users."""
    if not spec.needs_user_model:
        return None
    if config.rollout.user_model is not None:
        from trace_envs.llm.factory import make_chat_model

        return make_chat_model(config.rollout.user_model)
    return spec.default_user()
