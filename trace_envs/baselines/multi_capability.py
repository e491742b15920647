"""``multi-capability``: one adapter trained with GRPO on a mixture of capability envs (the paper's
"Multi-Capability GRPO", on a uniform mixture of all synthesised envs; weights make it a weighted one).

The run's ``budget // K`` groups are allocated to the envs by largest remainder (as the authors'
``GameMix`` does) and trained in an interleaved, fixed order; every group is one env and one seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_envs.training import AdapterMetadata, TrainConfig
from trace_envs.training.trainer import ProgressFn

from .budget import budgeted_config
from .grpo import run_grpo_baseline
from .mixture import allocate_groups, check_weights, group_schedule, mixture_rows
from .record import BaselineRun

METHOD = "multi-capability"


def multi_capability(
    env_ids: Sequence[str],
    model: str,
    out_dir: str | Path,
    budget: int,
    config: TrainConfig | None = None,
    *,
    weights: Sequence[float] | None = None,
    knobs: dict[str, dict[str, Any]] | None = None,
    resume: bool = True,
    progress: ProgressFn | None = None,
) -> tuple[AdapterMetadata, BaselineRun]:
    """GRPO on a mixture of ``env_ids`` for ``budget`` rollouts; the adapter in ``OUT/adapter``.

    Args:
        env_ids: The capability envs of the mixture (each once).
        model: Base model (directory or hub id).
        out_dir: The run folder.
        budget: Rollouts to spend; ``max_steps = budget // rollouts_per_step``.
        config: GRPO settings (default: the paper's); its ``env_ids`` are replaced, ``first_seed`` starts
            every env's seeds.
        weights: One weight per env (default: uniform); groups are allocated by largest remainder.
        knobs: Constructor options per env id.
        resume: Continue from the last checkpoint; a finished run is not trained again.
        progress: ``progress(step, max_steps, log_entry)`` at every logging step.
    """
    weights = check_weights(env_ids, weights)
    config = (config or TrainConfig()).model_copy(update={"env_ids": list(env_ids), "env_knobs": dict(knobs or {})})
    steps = budgeted_config(config, budget).max_steps
    counts = allocate_groups(env_ids, weights, steps * config.groups_per_step)
    rows = mixture_rows(group_schedule(counts, config.first_seed), config.env_knobs)
    mix = ", ".join(f"{env_id} x{w:g}" for env_id, w in zip(env_ids, weights, strict=True))
    return run_grpo_baseline(
        METHOD,
        config,
        model,
        out_dir,
        budget,
        rows=rows,
        description=f"One adapter trained with GRPO on a mixture of capability envs ({mix}).",
        ordered=True,
        resume=resume,
        progress=progress,
        extra={"weights": dict(zip(env_ids, weights, strict=True)), "groups": counts},
    )
