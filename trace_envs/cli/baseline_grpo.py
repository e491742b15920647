"""What the GRPO baselines' commands (``grpo-target``, ``multi-capability``) share: their training options,
and the budget check."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

BudgetOption = Annotated[
    int,
    typer.Option(metavar="ROLLOUTS", help="Rollouts to spend (iterations x G x K); the run stops there."),
]
ConfigOption = Annotated[
    Path | None, typer.Option(metavar="FILE", help="YAML training config (fields of TrainConfig).")
]
GenerationsOption = Annotated[int | None, typer.Option(metavar="K", help="K rollouts per group (same seed).")]
GroupsOption = Annotated[
    int | None, typer.Option("--groups", metavar="G", help="G groups of K rollouts per step (default 8).")
]
BatchOption = Annotated[int | None, typer.Option(metavar="B", help="per_device_train_batch_size (multiple of K).")]
LengthOption = Annotated[int | None, typer.Option(metavar="T", help="Token cap of one multi-turn rollout.")]
LearningRateOption = Annotated[float | None, typer.Option(metavar="LR", help="AdamW learning rate (default 1e-5).")]
ResumeOption = Annotated[bool, typer.Option(help="Continue from the last checkpoint in OUT/adapter/checkpoints.")]


def grpo_config(config: Path | None, **overrides: Any) -> Any:
    """The ``TrainConfig`` of a baseline command (YAML file + options); a bad one is a usage error."""
    from trace_envs.training import load_config

    try:
        return load_config(config, **overrides)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--config") from None


def checked_budget(budget: int, config: Any) -> int:
    """The GRPO steps ``budget`` buys; a budget below one step is a usage error naming the smallest one."""
    from trace_envs.baselines.budget import grpo_steps

    try:
        return grpo_steps(budget, config)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--budget") from None
