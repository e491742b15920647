"""``trace-envs synthesize | validate``: write capability envs from an analysis, and run every gate on a module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .app import WeakerBoxOption, app
from .env_args import sampling_options
from .errors import fail as _fail
from .errors import renamed_option

if TYPE_CHECKING:
    from trace_envs.synthesis import CalibrationSettings, ValidationReport

console = Console()
TARGET_HELP = "A registered target (see trace_envs.registry.targets), e.g. retail or device."

# Options synthesize and validate share (the gates' and calibration's settings), declared once.
SeedsOption = Annotated[int, typer.Option(min=1, help="Seeds of the property suite.")]
FuzzExamplesOption = Annotated[int, typer.Option(min=1, help="Hypothesis examples of the any-action check.")]
FlawedShareOption = Annotated[
    float, typer.Option(min=0.01, max=1.0, help="The flawed solution must fail on this share of seeds.")
]
CalibrateOption = Annotated[
    str | None, typer.Option(metavar="POLICY", help="Calibrate with this policy (normally the base model).")
]
CalibrationSeedsOption = Annotated[int, typer.Option(min=1, help="Calibration seeds N.")]
SamplesOption = Annotated[int, typer.Option(min=1, help="Calibration samples K per seed.")]
DataOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH", help="The target's data folder or file (tau2: its data folder, else $TRACE_ENVS_TAU2_DATA)."
    ),
]
OldDataOption = Annotated[Path | None, typer.Option("--tau2-data", hidden=True, help="Deprecated: use --data.")]


OPTION_OF_FIELD = {"module": "MODULE", "target": "--target", "data": "--data"}


def _check_target(target: str, data: Path | None = None, *, check_data: bool = True) -> None:
    """The target is registered and (``check_data``) its data folder has the evaluation tasks, else exit 2."""
    from trace_envs.synthesis.module_checks import ModuleInputError, check_target

    try:
        check_target(target, data, check_data=check_data)
    except ModuleInputError as exc:
        raise _fail(f"{OPTION_OF_FIELD[exc.field]}: {exc}") from None


def _calibration(
    policy: str | None, seeds: int, samples: int, base_url: str | None, temperature: float | None
) -> CalibrationSettings | None:
    if policy is None:
        return None
    from trace_envs.rollout import checked_policy_spec
    from trace_envs.synthesis import CalibrationSettings

    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    try:
        checked_policy_spec(policy, options or None)
    except ValueError as exc:
        raise _fail(f"--calibrate: {exc}") from None
    sampling = {"temperature": temperature} if temperature is not None else {}
    return CalibrationSettings(policy=policy, seeds=seeds, samples=samples, model_options=options, sampling=sampling)


def _calibration_line(report: ValidationReport) -> str | None:
    calibration = next((r for r in report.results if r.gate == "calibration" and r.details.get("episodes")), None)
    if calibration is None:
        return None
    d = calibration.details
    at = "  ".join(f"pass@{k} {v:.2f}" for k, v in d["pass_at"].items() if v is not None)
    return (
        f"calibration ({d['policy']}): success {d['mean_success']:.2f}, reward std {d['reward_std']:.3f}, "
        f"informative groups {d['informative_share']:.0%}  {at}"
    )


@app.command("synthesize")
def synthesize_command(
    analysis: Annotated[Path, typer.Argument(help="analysis.json written by `trace-envs analyze` (or its folder).")],
    target: Annotated[str, typer.Option("--target", "-t", help=TARGET_HELP)],
    generator: Annotated[
        str,
        typer.Option(
            "--generator", "-g", metavar="SPEC", help="catalogue, anthropic:<model>, openai:<url>#<model> or hf:<path>."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Output folder (modules, manifest.json).")],
    capability: Annotated[
        list[str] | None,
        typer.Option("--capability", help="Capability to synthesise (repeat); default: every kept one."),
    ] = None,
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Attempts per capability (the first plus repairs).")] = 3,
    seeds: SeedsOption = 50,
    fuzz_examples: FuzzExamplesOption = 50,
    flawed_share: FlawedShareOption = 0.2,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Capabilities synthesised in parallel.")] = 2,
    calibrate: CalibrateOption = None,
    calibration_seeds: CalibrationSeedsOption = 16,
    samples: SamplesOption = 8,
    data: DataOption = None,
    tau2_data: OldDataOption = None,
    store: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Trajectory store for excerpts (default: the analysis's).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Generator endpoint override (a proxy or a local server).")
    ] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="On-disk response cache of the generator.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Generator sampling temperature.")] = None,
    max_tokens: Annotated[int, typer.Option(min=256, help="Token cap of one generator reply.")] = 16_000,
    timeout: Annotated[
        float,
        typer.Option(
            min=1, metavar="SECONDS", help="Seconds before a generator request times out (raise it for a relay)."
        ),
    ] = 120.0,
    weaker_box: WeakerBoxOption = False,
) -> None:
    """Write one capability env per kept capability of an analysis, each through every gate.

    Failed attempts go back to the generator with their gate report, for --rounds attempts at most;
    modules that pass are written to --out with manifest.json, the rest are reported as rejected. Every
    attempt is kept under OUT/attempts/; rerun the same command to resume without paying twice.
    Exit code 0: all passed; 1: some rejected; 2: bad input, or a generator failed (rerun to resume).

    Example: trace-envs synthesize analysis/analysis.json -t retail -g anthropic:claude-sonnet-4-6 -o envs/

    Offline: trace-envs synthesize analysis/analysis.json -t retail -g catalogue -o envs/
    """
    from trace_envs.synthesis import SynthesisResult, SynthesisSettings, make_generator

    # cheapest and most basic first: the input file, the target, the capabilities, the generator (a missing
    # key fails here, through the shared handler), then the target's data
    result, names = _analysis_and_names(analysis, target, capability)
    if not names:
        console.print("nothing to synthesise: the analysis kept no capability (pass --capability NAME to pick one)")
        return
    overrides: dict[str, Any] = {"timeout_s": timeout}
    if base_url is not None:
        overrides["base_url"] = base_url
    if cache_dir is not None:
        overrides["cache_dir"] = str(cache_dir)
    sampling = sampling_options(temperature, max_tokens)
    try:
        gen = make_generator(generator, sampling=sampling, **overrides)
    except ValueError as exc:
        raise _fail(f"--generator: {exc}") from None
    data = renamed_option(data, tau2_data, "--data", "--tau2-data")
    _check_target(target, data)
    settings = SynthesisSettings(
        rounds=rounds, seeds=seeds, fuzz_examples=fuzz_examples, flawed_failure_share=flawed_share,
        data=data, calibration=_calibration(calibrate, calibration_seeds, samples, None, None),
    )  # fmt: skip
    base = analysis.parent if analysis.is_file() else analysis
    options = {"capabilities": names, "jobs": jobs, "settings": settings, "store": store, "base": base}
    outcomes = _synthesize_with_progress(result, target, gen, out, options)
    _print_outcomes(outcomes, f"synthesis for {target} with {gen.spec}")
    if gen.spec == "catalogue":
        console.print("offline: the catalogue generator reused shipped envs (no model was asked)")
    console.print(f"wrote {out / 'manifest.json'}; attempts under {out / 'attempts'}")
    if any(not isinstance(o, SynthesisResult) for o in outcomes):  # a stopped run, as in rollout and analyze
        console.print("a generator failed: fix the cause (key, endpoint) and rerun the same command to resume")
        raise typer.Exit(2)
    if any(o.status != "passed" for o in outcomes if isinstance(o, SynthesisResult)):
        raise typer.Exit(1)


def _analysis_and_names(analysis: Path, target: str, capability: list[str] | None) -> tuple[Any, list[str]]:
    """The analysis read from ANALYSIS, the target checked, and the capabilities to synthesise (--capability,
    else every kept one), each known to the analysis."""
    from trace_envs.analysis.runner import load_analysis

    try:
        result = load_analysis(analysis)
    except (OSError, ValueError) as exc:
        raise _fail(f"ANALYSIS: {analysis} is not a readable analysis.json: {str(exc).splitlines()[0]}") from None
    _check_target(target, check_data=False)
    names = list(capability) if capability else list(result.kept)
    unknown = [name for name in names if result.dictionary.get(name) is None]
    if unknown:
        raise _fail(f"--capability: {', '.join(unknown)} not in the analysis ({', '.join(result.dictionary.names)})")
    return result, names


def _synthesize_with_progress(result: Any, target: str, gen: Any, out: Path, options: dict[str, Any]) -> list[Any]:
    """:func:`trace_envs.synthesis.synthesize_analysis` with one spinner row per capability."""
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from trace_envs.safe_text import shown
    from trace_envs.synthesis import SynthesisResult, synthesize_analysis

    with Progress(
        SpinnerColumn(), TextColumn("[bold]{task.description}"), TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(), console=console,
    ) as progress:  # fmt: skip
        rows = {name: progress.add_task(name, total=None, status="waiting") for name in options["capabilities"]}

        def on_progress(name: str, status: str) -> None:
            # the status can quote a module's finding: one escaped line, and no Rich markup of the module's
            progress.update(rows[name], status=escape(shown(status)))

        try:
            outcomes = synthesize_analysis(result, target, gen, out=out, progress=on_progress, **options)
        except ValueError as exc:  # an --out folder of another generator or prompt
            raise _fail(str(exc)) from None
        for outcome in outcomes:
            done = "passed" if isinstance(outcome, SynthesisResult) and outcome.status == "passed" else "stopped"
            progress.update(rows[outcome.capability], status=done, total=1, completed=1)
    return outcomes


def _print_outcomes(outcomes: list[Any], title: str) -> None:
    """The table of every capability's outcome (module or reason, attempts, cost), then each result's notes."""
    from trace_envs.synthesis import SynthesisResult

    table = Table(title=title)
    for column in ("capability", "status", "attempts", "module / reason", "cost"):
        table.add_column(column)
    for outcome in outcomes:
        if not isinstance(outcome, SynthesisResult):
            table.add_row(outcome.capability, "[red]stopped[/red]", "-", escape(outcome.error), "-")
            continue
        ok = outcome.status == "passed"
        where = f"{outcome.module} ({outcome.env_id})" if ok else outcome.reason
        status = "[green]passed[/green]" if ok else "[red]rejected[/red]"
        table.add_row(outcome.capability, status, str(outcome.attempts), escape(where), f"${outcome.cost_usd:.4f}")
    console.print(table)
    for outcome in outcomes:
        if isinstance(outcome, SynthesisResult):
            for note in outcome.notes:
                console.print(f"{outcome.capability}: {note}", markup=False, highlight=False)


@app.command("validate")
def validate_command(
    modules: Annotated[list[Path], typer.Argument(metavar="MODULE.py...", help="Env modules to validate.")],
    target: Annotated[
        str | None, typer.Option("--target", "-t", help=TARGET_HELP + " Default: the domain the module imports.")
    ] = None,
    capability: Annotated[
        str | None, typer.Option("--capability", help="Capability the module must declare (default: any).")
    ] = None,
    calibrate: CalibrateOption = None,
    calibration_seeds: CalibrationSeedsOption = 16,
    samples: SamplesOption = 8,
    policy_base_url: Annotated[str | None, typer.Option(help="Endpoint override of the calibration policy.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Calibration sampling temperature.")] = None,
    as_json: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Write the report(s) as JSON to FILE.")
    ] = None,
    data: DataOption = None,
    tau2_data: OldDataOption = None,
    seeds: SeedsOption = 50,
    fuzz_examples: FuzzExamplesOption = 50,
    flawed_share: FlawedShareOption = 0.2,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Modules validated in parallel.")] = 2,
    trust: Annotated[
        list[str] | None,
        typer.Option(
            metavar="PACKAGE",
            help="Also allow imports of this installed package (repeat); catalogue modules get theirs.",
        ),
    ] = None,
    weaker_box: WeakerBoxOption = False,
) -> None:
    """Run every gate on env modules written by anyone, and print the gate table of each.

    A module that passes and sits in a synthesis output folder is recorded in its manifest.json (so an
    edited module loads again once validated). Exit code 0: all passed; 1: some rejected; 2: bad input.

    Example: trace-envs validate envs/unit_conversion.py --data ~/tau2-bench/data/tau2/domains --json report.json
    """
    from trace_envs.synthesis.module_checks import ModuleInputError, read_module, validate_modules

    data = renamed_option(data, tau2_data, "--data", "--tau2-data")
    try:
        sources = [read_module(path, target, data) for path in modules]
    except ModuleInputError as exc:
        raise _fail(f"{OPTION_OF_FIELD[exc.field]}: {exc}") from None
    calibration = _calibration(calibrate, calibration_seeds, samples, policy_base_url, temperature)
    settings: dict[str, Any] = {
        "capability": capability, "seeds": seeds, "fuzz_examples": fuzz_examples, "data": data,
        "flawed_failure_share": flawed_share, "calibration": calibration,
    }  # fmt: skip
    with console.status(f"validating {len(sources)} module(s), {jobs} at a time…"):
        done = validate_modules(sources, trust=trust, jobs=jobs, weaker_box=weaker_box, **settings)
    for checked in done:
        console.print(checked.report.table(), markup=False, highlight=False)
        line = _calibration_line(checked.report)
        if line:
            console.print(line, highlight=False)
        if checked.recorded:
            console.print(f"recorded {checked.path.name} in {checked.path.parent / 'manifest.json'}", highlight=False)
    if as_json is not None:
        reports: Any = [checked.report.model_dump(mode="json") for checked in done]
        as_json.write_text(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {as_json}")
    if not all(checked.report.passed for checked in done):
        raise typer.Exit(1)
