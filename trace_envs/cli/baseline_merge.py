"""``trace-envs baseline merge``: consolidate capability adapters into one (linear, TIES, DARE, CORE-TSV)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .baseline import baseline_app, parse_weights

console = Console()


@baseline_app.command("merge")
def merge_command(
    model: Annotated[str, typer.Option(metavar="MODEL", help="The adapters' base model (directory or hub id).")],
    adapter: Annotated[
        list[Path], typer.Option("--adapter", metavar="DIR", help="Adapter directory to merge (repeat, 2 or more).")
    ],
    budget: Annotated[
        int,
        typer.Option(min=1, metavar="ROLLOUTS", help="Rollout budget; refused when the adapters spent more."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="New directory for the merged adapter.")],
    method: Annotated[
        str, typer.Option(metavar="METHOD", help="linear, ties, dare-linear, dare-ties or core-tsv.")
    ] = "core-tsv",
    weights: Annotated[
        str | None,
        typer.Option(metavar="W1,W2,...", help="One weight per adapter (default 1 each; 1/N for linear, dare-linear)."),
    ] = None,
    density: Annotated[
        float | None, typer.Option(metavar="D", help="Share of entries TIES/DARE keep (default 0.5).")
    ] = None,
    rank: Annotated[
        int | None,
        typer.Option(metavar="R", help="Rank of the result (default the largest input rank; linear: exact)."),
    ] = None,
    ties: Annotated[
        bool | None,
        typer.Option("--ties/--no-ties", help="core-tsv: run its TIES step (default on, the paper's)."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, metavar="N", help="Seed of DARE's random drops.")] = 0,
) -> None:
    """Merge capability adapters into one PEFT adapter, with baseline.json beside it.

    Example: trace-envs baseline merge --model ./tiny --adapter adapters/a --adapter adapters/b --budget 64 --out merged
    """
    import importlib

    from trace_envs.baselines.merge import merge_adapters
    from trace_envs.baselines.merge_inputs import MergeInputError

    for module in ("torch", "peft", "safetensors"):  # a missing train extra is said before any adapter is read
        importlib.import_module(module)

    from .checks import checked_model

    parsed = parse_weights(weights)
    try:
        with console.status(f"merging {len(adapter)} adapters ({method})…"):
            if method != "core-tsv":  # core-tsv reads the adapter files only; the others load the model
                checked_model(model)
            run = merge_adapters(
                model,
                adapter,
                out,
                method=method,
                weights=parsed,
                density=density,
                rank=rank,
                ties=ties,
                seed=seed,
                budget=budget,
            )
    except MergeInputError as exc:
        raise typer.BadParameter(str(exc)) from None
    console.print(
        f"[green]merged[/] {len(adapter)} adapters with {method} → {out} · rank {run.config['rank']} · "
        f"{run.rollouts_used} of {budget} rollouts"
    )
