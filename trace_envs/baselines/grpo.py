"""A GRPO baseline run on a rollout budget: TRL's GRPOTrainer through the training bridge, then ``baseline.json``.

``grpo-target`` and ``multi-capability`` differ only in the envs and the dataset rows they train on.
The adapter goes to ``OUT/adapter`` (with ``trace_adapter.json``, so ``route`` and evaluation load it)
and the record of the run to ``OUT/baseline.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_envs.training import AdapterMetadata, TrainConfig, build_run, finished_run
from trace_envs.training.trainer import ProgressFn

from .budget import budgeted_config
from .record import BaselineRun, save_baseline_run

ADAPTER_DIR = "adapter"
"""Where a baseline's adapter goes, inside its output folder."""


def run_grpo_baseline(
    method: str,
    config: TrainConfig,
    model: str,
    out_dir: str | Path,
    budget: int,
    *,
    rows: list[dict[str, Any]] | None = None,
    description: str | None = None,
    ordered: bool = False,
    resume: bool = True,
    progress: ProgressFn | None = None,
    extra: dict[str, Any] | None = None,
) -> tuple[AdapterMetadata, BaselineRun]:
    """Train ``budget // rollouts_per_step`` GRPO steps on ``config.env_ids`` and write the adapter and
    ``baseline.json`` under ``out_dir``.

    Args:
        method: The baseline's name, as in ``trace-envs baseline NAME``.
        config: The GRPO settings; its ``max_steps`` is replaced by what the budget buys.
        model: Base model (directory or hub id).
        out_dir: The run folder (``adapter/`` and ``baseline.json`` go there).
        budget: Rollouts to spend (iterations x G x K); fewer than one step's is a ``ValueError``.
        rows: Dataset rows, one per group (default: a uniform round robin over ``config.env_ids``).
        description: What the adapter was trained on (default: the training's own description).
        ordered: Train on ``rows`` in their order (TRL's ``shuffle_dataset`` off) instead of TRL's seeded shuffle.
        resume: Continue from the adapter's last checkpoint; a finished run is not trained again.
        progress: ``progress(step, max_steps, log_entry)`` at every logging step.
        extra: Settings recorded in ``baseline.json`` besides the training config.
    """
    config = budgeted_config(config, budget)
    out = Path(out_dir)
    adapter = out / ADAPTER_DIR
    metadata = finished_run(config, model, adapter) if resume else None
    if metadata is None:
        run = build_run(config, model, adapter, resume=resume, progress=progress, rows=rows)
        if description is not None:
            run.metadata.description = description
        if ordered:
            run.trainer.shuffle_dataset = False  # TRL reads it when the first training batch is sampled
        metadata = run.run()
    record = BaselineRun(
        method=method,
        env_ids=list(config.env_ids),
        base_model=str(model),
        budget=budget,
        rollouts_used=metadata.steps_done * config.rollouts_per_step,
        artifact=ADAPTER_DIR,
        config={
            "max_steps": config.max_steps,
            "groups_per_step": config.groups_per_step,
            "num_generations": config.num_generations,
            **(extra or {}),
            "train": metadata.config,
        },
    )
    save_baseline_run(out, record)
    return metadata, record
