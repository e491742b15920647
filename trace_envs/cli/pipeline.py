"""``trace-envs pipeline CONFIG.yaml`` and ``trace-envs demo``: the whole TRACE run, cached per stage, with one
progress display over every stage."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from .app import app
from .errors import fail as _fail

if TYPE_CHECKING:
    from trace_envs.evaluation.results import TargetInfo
    from trace_envs.pipeline import Check, PipelineConfig, StageOutcome
    from trace_envs.pipeline.results import RouteResult

console = Console()
DEMO_OUT = Path("trace-demo")

StageOption = Annotated[
    str | None,
    typer.Option("--stage", metavar="NAME", help="Run only this stage (its inputs must be finished)."),
]


def _quiet() -> None:
    """Keep the progress display readable: no per-file bars or deprecation notices from the training libraries."""
    import os
    import warnings

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", message=".*environment_factory.*")
    try:
        from transformers.utils.logging import disable_progress_bar
    except ModuleNotFoundError:  # without the train extra the training stages say which extra to install
        return
    disable_progress_bar()


class ProgressDisplay:
    """A rich progress row per stage: waiting, running (with its current step and count), cached or done."""

    def __init__(self, progress: Any, names: tuple[str, ...]):
        self.progress = progress
        self.rows = {name: progress.add_task(name, total=None, status="[dim]waiting", start=False) for name in names}

    def stage_started(self, name: str, action: str) -> None:
        self.progress.start_task(self.rows[name])
        self.progress.update(self.rows[name], status="resuming…" if action == "resumed" else "running…")

    def stage_status(self, name: str, text: str, done: int | None, total: int | None) -> None:
        from trace_envs.safe_text import shown

        count = f" {done}/{total}" if done is not None and total else ""  # the text can quote a box: one escaped line
        self.progress.update(self.rows[name], status=f"{shown(text)}{count}", completed=done or 0, total=total)

    def stage_finished(self, outcome: StageOutcome) -> None:
        label = {"cached": "[cyan]cached (inputs unchanged)", "resumed": "[green]done (resumed)"}
        row = self.rows[outcome.name]
        self.progress.start_task(row)  # a cached stage never started: rich counts only a started task finished
        self.progress.update(row, status=label.get(outcome.action, "[green]done"), total=1, completed=1)
        self.progress.stop_task(row)


def stage_columns(console: Console) -> tuple[Any, ...]:
    """The columns of a stage row: a spinner while the stage runs (in a terminal only: written to a file or
    a pipe the display is printed once, at the end, where a spinner's frozen frame means nothing), its name,
    a bar, its status and its time."""
    from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

    class RunningSpinner(SpinnerColumn):
        """No glyph for a stage still waiting, only for one running."""

        def render(self, task: Any) -> Any:
            return super().render(task) if task.started else self.finished_text

    spinner = (RunningSpinner(),) if console.is_terminal else ()
    return (
        *spinner, TextColumn("[bold]{task.description:<10}"), BarColumn(bar_width=24),
        TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
    )  # fmt: skip


def run_with_display(config: PipelineConfig, out: Path, stage: str | None) -> list[StageOutcome]:
    """Run the pipeline under a progress display; a stage error is one line (exit code 2), Ctrl-C one line
    saying what is kept and how to go on (exit code 130)."""
    from rich.progress import Progress

    from trace_envs.pipeline import STAGE_NAMES, PipelineEvents, PreflightFailed, StageError, run_pipeline
    from trace_envs.pipeline.runner import preflight_pending

    if stage is not None and stage not in STAGE_NAMES:
        raise _fail(f"--stage: no stage {stage!r}; use one of {', '.join(STAGE_NAMES)}")
    try:
        with console.status("preflight: keys, endpoints, extras, data, disk…"):
            preflight_pending(config, out, stage)
    except PreflightFailed as exc:
        print_checks(exc.checks)
        raise _fail("preflight failed: fix the rows marked failed above, then rerun") from None
    _quiet()
    names = STAGE_NAMES if stage is None else (stage,)
    with Progress(*stage_columns(console), console=console) as progress:
        display = ProgressDisplay(progress, names)

        class Events(PipelineEvents):
            stage_started = staticmethod(display.stage_started)
            stage_status = staticmethod(display.stage_status)
            stage_finished = staticmethod(display.stage_finished)

        try:
            return run_pipeline(config, out, only=stage, events=Events(), check=False)  # checked above
        except StageError as exc:
            progress.stop()
            raise _fail(str(exc)) from None
        except KeyboardInterrupt:
            progress.stop()
            console.print(
                f"[yellow]interrupted:[/yellow] the finished stages are kept in {out} and the stopped one "
                "resumes; rerun the same command to go on"
            )
            raise typer.Exit(130) from None


def print_checks(checks: list[Check]) -> None:
    """The preflight table: one row per check (what, status, what was found, the fix), as plain text."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="preflight")
    for column in ("check", "status", "found", "fix"):
        table.add_column(column, overflow="fold")
    for check in checks:
        status = Text("ok", style="green") if check.ok else Text("failed", style="red")
        table.add_row(Text(check.what), status, Text(check.detail), Text(check.fix))
    console.print(table)


def print_outcomes(outcomes: list[StageOutcome], out: Path) -> None:
    """One line per stage: what it did and its headline numbers; then the routing as a table."""
    from trace_envs.pipeline.results import RouteResult

    for outcome in outcomes:
        console.print(f"[bold]{outcome.name:<10}[/bold] {outcome.action:<8} {_headline(outcome)}", highlight=False)
    for outcome in outcomes:
        if isinstance(outcome.result, RouteResult) and outcome.result.targets:
            console.print(route_table(outcome.result))
    report = out / "report" / "report.html"
    if report.exists():
        console.print(f"report: {report} (and {report.with_suffix('.md')})")


def _headline(outcome: StageOutcome) -> str:
    """A stage's headline numbers on one line, read off its typed result."""
    from trace_envs.pipeline import results as r

    found = outcome.result
    if isinstance(found, r.RolloutResult):
        return "; ".join(f"{t} pass {v.pass_rate:.0%} of {v.episodes}" for t, v in found.targets.items())
    if isinstance(found, r.AnalyzeResult):
        return "; ".join(f"{t} kept {', '.join(v.kept) or 'nothing'}" for t, v in found.targets.items())
    if isinstance(found, r.SynthesizeResult):
        return "; ".join(f"{t}/{c} {e.status}" for t, envs in found.targets.items() for c, e in envs.items()) or "-"
    if isinstance(found, r.TrainResult):
        return "; ".join(f"{name} {a.steps} steps" for name, a in found.adapters.items()) or "-"
    if isinstance(found, r.RouteResult):
        return "; ".join(f"{t} {sum(v.routes.values())} tasks" for t, v in found.targets.items()) + " (table below)"
    if isinstance(found, r.EvaluateResult):
        return "; ".join(
            f"{t}{_evaluated(v.target)}: " + ", ".join(f"{p} {rate:.0%}" for p, rate in v.pass_rates().items())
            for t, v in found.targets.items()
        )
    return found.html if isinstance(found, r.ReportResult) else ""


def _evaluated(target: TargetInfo) -> str:
    """`` (first 9 of 48 tasks)`` when the evaluation kept only some of a target's tasks (the rollout ran on
    all of them, so the two pass rates are over different tasks)."""
    if target.limit is None or target.available in (None, target.tasks):
        return ""
    return f" (first {target.limit} of {target.available} tasks)"


def route_table(routing: RouteResult) -> Any:
    """The route stage's result as a table: per target, how many rollout tasks the router sent where."""
    from rich.table import Table

    table = Table(title="Routing of the rollout tasks", title_justify="left")
    for column in ("target", "adapters", "routed to", "tasks"):
        table.add_column(column)
    for target, value in routing.targets.items():
        routes = value.routes
        total = sum(routes.values())
        if not routes:
            table.add_row(target, str(value.adapters), "(no adapter: nothing routed)", "-")
        for index, (route, count) in enumerate(sorted(routes.items(), key=lambda item: (-item[1], item[0]))):
            name = "base model alone" if route == "base" else route
            first = index == 0
            table.add_row(target if first else "", str(value.adapters) if first else "", name,
                          f"{count}/{total} ({count / total:.0%})")  # fmt: skip
    return table


@app.command("pipeline")
def pipeline_command(
    config: Annotated[Path, typer.Argument(metavar="CONFIG.yaml", help="The pipeline config (see docs/tutorial.md).")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", metavar="DIR", help="Output folder (default: CONFIG's name).")
    ] = None,
    stage: StageOption = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only run the preflight (keys, endpoints, extras, data, disk) and exit.")
    ] = False,
) -> None:
    """Run TRACE end to end: rollout, analyze, synthesize, train, route, evaluate, report.

    Each stage is cached under OUT/<stage>/ by a hash of its inputs and config: rerunning skips finished
    stages, reruns a stage whose inputs or config changed (and the ones after it), and resumes a killed one.
    A preflight runs first: each model's extra and API key, one cheap request per endpoint, the training
    libraries, the data folders and the free space; --check runs it alone (exit 0: all passed, 2: not).

    Example: trace-envs pipeline trace.yaml --check && trace-envs pipeline trace.yaml --out runs/trace
    """
    from trace_envs.pipeline import ConfigError, load_config, preflight

    try:
        loaded = load_config(config)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    folder = out if out is not None else config.with_suffix("")
    if check:
        with console.status("preflight: keys, endpoints, extras, data, disk…"):
            checks = preflight(loaded, folder)
        print_checks(checks)
        if not all(c.ok for c in checks):
            raise typer.Exit(2)
        return
    print_outcomes(run_with_display(loaded, folder, stage), folder)


@app.command("demo")
def demo_command(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Output folder.")] = DEMO_OUT,
    stage: StageOption = None,
    model: Annotated[
        str,
        typer.Option(
            metavar="MODEL",
            help="Model trained, routed and evaluated: tiny, or smollm2-135m-instruct (real, slower).",
        ),
    ] = "tiny",
) -> None:
    """Run the whole TRACE pipeline offline on CPU, on an embedded config (a few minutes).

    Scripted base agent with planted deficits, tau2 tasks on generated databases, the offline probes as
    analyst, the catalogue generator through the real gates, a tiny model for a few GRPO steps (or the real
    SmolLM2 with --model), the router, the evaluation and the report. Rerunning resumes (finished stages are
    cached).
    """
    from trace_envs.pipeline import demo_config

    try:
        config = demo_config(model)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--model") from None
    print_outcomes(run_with_display(config, out, stage), out)
    console.print()
    for note in config.simulated:
        console.print(note, markup=False, highlight=False)
