"""What the GRPO baselines' commands (``grpo-target``, ``multi-capability``) share: their training options
(TrainConfig's, :mod:`.train_options`), and the budget check."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .train_options import with_train_options

BudgetOption = Annotated[
    int,
    typer.Option(metavar="ROLLOUTS", help="Rollouts to spend (iterations x G x K); the run stops there."),
]
ResumeOption = Annotated[bool, typer.Option(help="Continue from the last checkpoint in OUT/adapter/checkpoints.")]


grpo_baseline_options = with_train_options(leave_out=frozenset({"max_steps"}))
"""The training options of a GRPO baseline: every TrainConfig knob but ``max_steps``, which --budget sets."""


def checked_budget(budget: int, config: Any) -> int:
    """The GRPO steps ``budget`` buys; a budget below one step is a usage error naming the smallest one."""
    from trace_envs.baselines.budget import grpo_steps

    try:
        return grpo_steps(budget, config)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--budget") from None
