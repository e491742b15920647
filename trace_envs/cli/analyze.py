"""``trace-envs analyze``: contrastive capability analysis of a trajectory store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .app import app
from .errors import print_error
from .text import plural

console = Console()


def _pct(value: float | None) -> str:
    return "undefined" if value is None else f"{100 * value:.0f}%"


@app.command("analyze")
def analyze_command(
    store: Annotated[Path, typer.Argument(help="Trajectory store (JSONL written by `trace-envs rollout`).")],
    analyst: Annotated[
        str,
        typer.Option(
            metavar="SPEC",
            help="Analyst: a model spec (anthropic:<model>, openai:<url>#<model>, hf:<path>) or 'probes'.",
        ),
    ] = "probes",
    runs: Annotated[int, typer.Option(min=1, metavar="R", help="Labelling runs R (discovery runs once).")] = 10,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="DIR", help="Output folder (analysis.json, report.md, plots, labels.jsonl)."
        ),
    ] = Path("analysis"),
    delta: Annotated[
        float, typer.Option(help="Select when gap = ER- - ER+ >= delta (ER- >= delta when ER+ is undefined).")
    ] = 0.20,
    rho: Annotated[float, typer.Option(help="Keep when coverage of failures >= rho.")] = 0.10,
    min_selection: Annotated[float, typer.Option(help="Keep when selected in at least this share of runs.")] = 0.5,
    batch: Annotated[
        bool, typer.Option(help="Label through the Anthropic Message Batches API (large stores).")
    ] = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Labelling requests in flight at once.")] = 8,
    discovery_tokens: Annotated[int, typer.Option(help="Token budget of trajectories shown to discovery.")] = 60_000,
    trajectory_tokens: Annotated[int, typer.Option(help="Token cap of one rendered trajectory.")] = 6_000,
    seed: Annotated[int, typer.Option(help="Seed of the discovery sample.")] = 0,
    temperature: Annotated[float | None, typer.Option(help="Analyst sampling temperature.")] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="On-disk response cache of the analyst.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Analyst endpoint override (a proxy or a local server).")] = None,
    poll: Annotated[float, typer.Option(help="Seconds between Message Batch status checks.")] = 30.0,
) -> None:
    """Find the capabilities the agent lacks (contrastive analysis of a trajectory store).

    Discovery runs once, then R labelling runs; ER+/ER-/gap/coverage per capability, the kept list,
    analysis.json and a Markdown report with plots go to --out. Rerun the same command to resume after
    an interruption; an --out folder made from another store is refused.

    Example: trace-envs analyze runs/x.jsonl --analyst anthropic:claude-sonnet-4-6 --runs 10 --out analysis/

    Offline: trace-envs analyze runs/x.jsonl --analyst probes --runs 1 --out analysis/
    """
    from pydantic import ValidationError
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from trace_envs.analysis import AnalysisConfig, arun_analysis
    from trace_envs.analysis.parsing import AnalystOutputError
    from trace_envs.llm import LLMError
    from trace_envs.problems import validation_problems

    sampling = {"temperature": temperature} if temperature is not None else {}
    try:
        config = AnalysisConfig(
            analyst=analyst, runs=runs, delta=delta, rho=rho, min_selection=min_selection, batch=batch,
            concurrency=concurrency, discovery_token_budget=discovery_tokens,
            trajectory_token_budget=trajectory_tokens, seed=seed, sampling=sampling,
        )  # fmt: skip
    except ValidationError as exc:
        raise typer.BadParameter(validation_problems(exc)) from None
    model = _analyst_model(analyst, cache_dir, base_url)
    import asyncio

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        tasks: dict[str, object] = {}

        def on_progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = progress.add_task({"discover": "discovery", "label": "labelling"}[phase], total=total)
            progress.update(tasks[phase], completed=done, total=total)  # type: ignore[arg-type]

        try:
            result = asyncio.run(arun_analysis(store, config, out, analyst=model, progress=on_progress, poll_s=poll))
        except (AnalystOutputError, LLMError) as exc:  # labels so far are kept; rerunning resumes
            print_error(str(exc), "analysis stopped:")
            raise typer.Exit(2) from None
        except (FileNotFoundError, ValueError) as exc:  # a missing or empty store, an --out folder of another store
            print_error(str(exc))
            raise typer.Exit(2) from None
    _print_result(result, runs, out)


def _analyst_model(analyst: str, cache_dir: Path | None, base_url: str | None) -> Any:
    """The analyst's chat model (None for the offline probes), with the --cache-dir and --base-url overrides."""
    if analyst == "probes":
        return None
    from trace_envs.llm.factory import make_chat_model

    overrides: dict[str, object] = {}
    if cache_dir is not None:
        overrides["cache_dir"] = str(cache_dir)
    if base_url is not None:
        overrides["base_url"] = base_url
    try:
        return make_chat_model(analyst, **overrides)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--analyst") from exc


def _print_result(result: Any, runs: int, out: Path) -> None:
    """The per-capability table (selection, coverage, gap, kept), the keep rule, the kept list and the files."""
    from trace_envs.analysis.report import keep_rule

    title = f"{plural(result.episodes, 'episode')} ({result.failures} failed), {plural(runs, 'labelling run')}"
    table = Table(title=title)
    for column in ("capability", "selected", "coverage (median)", "gap (median)", "kept"):
        table.add_column(column)
    for s in sorted(result.summary, key=lambda s: (-s.selection_frequency, s.capability)):
        gap = "undefined" if s.gap_median is None else f"{s.gap_median:+.2f}"
        table.add_row(
            s.capability,
            f"{s.selected}/{s.runs}",
            _pct(s.coverage_median),
            gap,
            "[green]yes[/green]" if s.kept else "no",
        )
    console.print(table)
    console.print(f"rule: {keep_rule(result.config)}")
    console.print(f"kept: {', '.join(result.kept) or 'none'}   cost: ${result.cost_usd:.4f}")
    console.print(f"wrote {Path(out) / 'analysis.json'} and {Path(out) / 'report.md'}")
