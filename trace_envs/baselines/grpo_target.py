"""``grpo-target``: GRPO directly on the target env (the paper's "GRPO on target" baseline).

The target env (tau2 ``trace/tau2-airline-v0`` / ``trace/tau2-retail-v0`` with an LLM-played user, or the
device scenarios ``trace/device-v0`` with their scripted users) goes through the same TRL bridge as the
capability envs: one method per tool of the domain, the user's turns behind ``send_message_to_user``,
and the benchmark's own evaluation as the reward. Each group of K rollouts plays one task (one seed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_envs.training import AdapterMetadata, TrainConfig
from trace_envs.training.trainer import ProgressFn

from .grpo import run_grpo_baseline
from .record import BaselineRun

METHOD = "grpo-target"


def grpo_target(
    env_id: str,
    model: str,
    out_dir: str | Path,
    budget: int,
    config: TrainConfig | None = None,
    *,
    user_model: str | None = None,
    knobs: dict[str, Any] | None = None,
    resume: bool = True,
    progress: ProgressFn | None = None,
) -> tuple[AdapterMetadata, BaselineRun]:
    """GRPO on ``env_id`` for ``budget`` rollouts; the adapter in ``OUT/adapter``, the record in ``OUT/baseline.json``.

    Args:
        env_id: The target env, e.g. ``trace/tau2-retail-v0`` or ``trace/device-v0``.
        model: Base model (directory or hub id).
        out_dir: The run folder.
        budget: Rollouts to spend; ``max_steps = budget // rollouts_per_step``.
        config: GRPO settings (default: the paper's, ``TrainConfig()``); its ``env_ids`` are replaced.
        user_model: Model spec of the LLM that plays the user (``openai:<url>#<model>``, ``anthropic:<model>``,
            ``hf:<path>``), passed to the env as its ``user_model``; tau2 envs need one.
        knobs: The env's other constructor options (e.g. ``data_dir``, ``task_id``).
        resume: Continue from the last checkpoint; a finished run is not trained again.
        progress: ``progress(step, max_steps, log_entry)`` at every logging step.
    """
    env_knobs = dict(knobs or {})
    if user_model is not None:
        env_knobs["user_model"] = user_model
    config = (config or TrainConfig()).model_copy(
        update={"env_ids": [env_id], "env_knobs": {env_id: env_knobs} if env_knobs else {}}
    )
    return run_grpo_baseline(
        METHOD,
        config,
        model,
        out_dir,
        budget,
        description=f"GRPO directly on the target env {env_id}.",
        resume=resume,
        progress=progress,
        extra={"user_model": user_model},
    )
