"""What the GRPO baselines' commands (``grpo-target``, ``multi-capability``) share: their training options,
the budget check and the progress bar."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

BudgetOption = Annotated[
    int,
    typer.Option(metavar="ROLLOUTS", help="Rollouts to spend (iterations x G x K); the run stops there."),
]
ConfigOption = Annotated[
    Path | None, typer.Option(metavar="FILE", help="YAML training config (fields of TrainConfig).")
]
GenerationsOption = Annotated[int | None, typer.Option(metavar="K", help="K rollouts per group (same seed).")]
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


@contextmanager
def step_progress(console: Console, total: int) -> Iterator[Callable[[int, int, dict[str, Any]], None]]:
    """A progress bar over GRPO steps; yields the ``progress(step, max_steps, log_entry)`` callback."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("step {task.completed}/{task.total}"),
        BarColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("train", total=total, info="generating…")

        def progress(step: int, steps: int, entry: dict[str, Any]) -> None:
            info = f"reward {entry.get('reward', float('nan')):.3f} · {entry.get('step_time', 0.0):.1f}s/step"
            bar.update(task, completed=step, total=steps, info=info)

        yield progress
