"""The pipeline's targets as episode jobs: built-in device scenarios, tau2 tasks (the user's data, or tasks on
generated databases written into the rollout folder), and the tau2 customer that plays them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from trace_envs.rollout import EpisodeJob

from .config import TAU2_TARGETS, PipelineConfig

DEVICE_ENV = "trace/device-v0"
GENERATED_TAU2 = "tau2"
"""Folder of the rollout stage holding the generated tau2 domains (when no ``tau2_data`` is given)."""


def tau2_root(config: PipelineConfig, rollout_dir: Path) -> Path:
    """The folder holding the tau2 ``<domain>/`` folders: the user's data, or the generated ones."""
    return config.tau2_data if config.tau2_data is not None else rollout_dir / GENERATED_TAU2


def prepare_tau2(config: PipelineConfig, rollout_dir: Path) -> None:
    """Write generated tau2 domains for the tau2 targets when no data folder is given (kept across resumes)."""
    if config.tau2_data is not None:
        return
    from trace_envs.targets.tau2.generated import write_generated_domain

    for target in config.targets:
        if target in TAU2_TARGETS and not (rollout_dir / GENERATED_TAU2 / target / "tasks.json").exists():
            write_generated_domain(rollout_dir / GENERATED_TAU2, target, seed=config.seed)


def _pick(items: list[Any], limit: int | None, seed: int) -> list[Any]:
    """At most ``limit`` of ``items``, a seeded choice kept in the items' order."""
    if limit is None or limit >= len(items):
        return items
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


def target_jobs(config: PipelineConfig, target: str, rollout_dir: Path) -> list[EpisodeJob]:
    """One job per (task, sample); the task is pinned by env options, the seed numbers the task."""
    section = config.rollout
    if target == "device":
        from trace_envs.targets.device.builtin import builtin_pool

        names = _pick([s.name for s in builtin_pool(section.device_split)], section.max_tasks, config.seed)
        tasks = [(DEVICE_ENV, {"source": "builtin", "scenario": name}) for name in names]
    else:
        from trace_envs.targets.tau2 import load_domain_data

        folder = load_domain_data(tau2_root(config, rollout_dir), target).path
        ids = _pick(load_domain_data(folder, target).task_ids("base"), section.max_tasks, config.seed)
        tasks = [(f"trace/tau2-{target}-v0", {"data_dir": str(folder), "task_id": task_id}) for task_id in ids]
    return [
        EpisodeJob(env_id=env_id, seed=index, sample=sample, env_kwargs=dict(options))
        for index, (env_id, options) in enumerate(tasks)
        for sample in range(section.samples)
    ]


def tau2_user(config: PipelineConfig) -> Any:
    """The customer of tau2 tasks: the configured model, else the scripted customer."""
    if config.rollout.user_model is not None:
        from trace_envs.llm.factory import make_chat_model

        return make_chat_model(config.rollout.user_model)
    from trace_envs.targets.tau2.scripted_user import ScriptedCustomer

    return ScriptedCustomer()
