"""The progress bar of a GRPO run (``train`` and the GRPO baselines): step, reward, no-signal groups, time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console


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
            info = (
                f"reward {entry.get('reward', float('nan')):.3f} · no-signal groups "
                f"{entry.get('frac_reward_zero_std', float('nan')):.2f} · {entry.get('step_time', 0.0):.1f}s/step"
            )
            bar.update(task, completed=step, total=steps, info=info)

        yield progress
