"""The pipeline's targets as episode jobs: each registered target lists its tasks (built in, the user's data,
or generated stand-in data written into the rollout folder), and the tau2 customer plays the ones that need
a simulated user."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from trace_envs.rollout import EpisodeJob
from trace_envs.targets.registry import target

from .config import EpisodeSection, PipelineConfig

GENERATED_DATA = "tau2"
"""Folder of the rollout stage holding generated stand-in data (when no ``tau2_data`` is given)."""


def data_folder(config: PipelineConfig, rollout_dir: Path) -> Path:
    """The data folder of the targets that need one: the user's, or the generated one."""
    return config.tau2_data if config.tau2_data is not None else rollout_dir / GENERATED_DATA


def data_root(config: PipelineConfig, name: str, rollout_dir: Path) -> Path | None:
    """Where target ``name``'s tasks come from: :func:`data_folder`, or ``None`` (its built-in tasks)."""
    return None if target(name).builtin_tasks else data_folder(config, rollout_dir)


def prepare_data(config: PipelineConfig, rollout_dir: Path) -> None:
    """Write generated stand-in data for the targets that need data when no data folder is given (kept
    across resumes)."""
    if config.tau2_data is not None:
        return
    for name in config.targets:
        target(name).write_data(rollout_dir / GENERATED_DATA, seed=config.seed)


def _pick(items: list[Any], limit: int | None, seed: int) -> list[Any]:
    """At most ``limit`` of ``items``, a seeded choice kept in the items' order."""
    if limit is None or limit >= len(items):
        return items
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


def builtin_split(section: EpisodeSection, name: str) -> str | None:
    """The split of target ``name``'s built-in tasks that ``section`` plays (``None``: a target with a data folder)."""
    return section.device_split if target(name).builtin_tasks else None


def target_jobs(config: PipelineConfig, name: str, rollout_dir: Path) -> list[EpisodeJob]:
    """One job per (task, sample); the task is pinned by env options, the seed numbers the task."""
    section = config.rollout
    spec = target(name)
    split = builtin_split(section, name)
    tasks = _pick(spec.load_tasks(data_root(config, name, rollout_dir), split).tasks, section.max_tasks, config.seed)
    return [
        EpisodeJob(env_id=task.env_id, seed=index, sample=sample, env_kwargs={**task.env_kwargs, **task.reset_options})
        for index, task in enumerate(tasks)
        for sample in range(section.samples)
    ]


def simulated_user(config: PipelineConfig, name: str) -> Any:
    """Who plays the user of target ``name``'s tasks: for a target whose user is a chat model, the configured
    model, else the scripted tau2 customer; ``None`` for a target that scripts its own users."""
    if not target(name).needs_user_model:
        return None
    return tau2_user(config)


def tau2_user(config: PipelineConfig) -> Any:
    """The customer of tau2 tasks: the configured model, else the scripted customer."""
    if config.rollout.user_model is not None:
        from trace_envs.llm.factory import make_chat_model

        return make_chat_model(config.rollout.user_model)
    from trace_envs.targets.tau2.scripted_user import ScriptedCustomer

    return ScriptedCustomer()
