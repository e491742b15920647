"""``trace-envs evaluate``: evaluate policies on a target with K trials per task; prints a summary table and
writes ``results.json`` (see :mod:`trace_envs.evaluation`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .env_args import SpotChecksOption
from .errors import as_usage_error, print_error

SCRIPTED_USER = "scripted"
"""The ``--user-model`` value that selects the target's default user (tau2's scripted customer)."""
POLICY_HELP = "[NAME=]SPEC (forms above); repeat for several: the first is the baseline of the paired tests."


@app.command("evaluate")
def evaluate_command(
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "-t",
            help="A registered target (device, retail, ...), an alias (tau2-retail) or a family (tau2).",
        ),
    ],
    policy: Annotated[list[str], typer.Option("--policy", "-p", help=POLICY_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for results.json and the episode stores; resumed.")],
    trials: Annotated[int, typer.Option("--trials", "-k", min=1, help="Trials per task (pass^k up to K).")] = 1,
    data: Annotated[
        Path | None,
        typer.Option(
            help="The target's data folder or file (tau2: its data folder, else $TRACE_ENVS_TAU2_DATA; device: a "
            "scenario file, else the built-in scenarios)."
        ),
    ] = None,
    split: Annotated[str | None, typer.Option(help="tau2: base | train | test; device: all | train | test.")] = None,
    tasks: Annotated[int | None, typer.Option(min=1, help="Only the first N tasks per domain.")] = None,
    user_model: Annotated[
        str | None,
        typer.Option(
            help="The user of targets whose user is a chat model (tau2's customer): a model spec, or 'scripted' "
            "(default: the target's scripted user, only for scripted policies)."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, help="Episodes in flight at once.")] = 8,
    max_steps: Annotated[int | None, typer.Option(min=1, help="Stop an episode after this many agent turns.")] = None,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 2000,
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="Interval level.")] = 0.95,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutation resampling.")] = 0,
    temperature: Annotated[
        float | None,
        typer.Option(
            help="Sampling temperature of model policies. Not given: greedy, and an adapter at the temperature it "
            "was trained at (its trace_adapter.json).",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers", "-w", min=1, help="Processes sharing each policy's episodes (one results.json; not routed)."
        ),
    ] = 1,
    spot_checks: SpotChecksOption = None,
) -> None:
    """Evaluate every --policy on --target, --trials times per task, and write OUT/results.json.

    Every episode is appended to OUT/episodes/<name>.jsonl; rerunning the same command resumes (finished
    episodes are not played again) and rewrites results.json. Prints pass rate (tau2) or mean similarity
    and perfect rate (device) with bootstrap intervals, pass^k, and each policy against the first. Exits 1,
    with one line per policy naming the first cause, when episodes failed to run (e.g. an unreachable model).

    Policy forms: oracle (gold) | flawed:<cap> | noop | random | anthropic:<model> | openai:<base_url>#<model>
    | hf:<base> | hf:<base>@<adapter> | routed:<base>@<adapter>,<adapter>,... |
    routed:openai:<base_url>#<base>@<adapter>,... (one OpenAI-compatible server, e.g. vLLM --enable-lora, serves
    every adapter)
    """
    from rich.console import Console

    from trace_envs.core.spot_checks import DEFAULT_SPOT_CHECK_SHARE
    from trace_envs.evaluation import BootstrapSettings
    from trace_envs.evaluation.harness import evaluate
    from trace_envs.evaluation.policies import parse_policy
    from trace_envs.evaluation.targets import load_target
    from trace_envs.llm import LLMError, make_chat_model
    from trace_envs.rollout.workers import WorkerFailed

    console = Console()
    try:
        chosen = load_target(target, data, split, tasks)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc).splitlines()[0], param_hint="--target / --data / --split") from None
    entries = []
    for text in policy:
        try:
            entries.append(parse_policy(text))
        except (ValueError, FileNotFoundError) as exc:
            raise typer.BadParameter(str(exc).splitlines()[0], param_hint="--policy") from None
    user: Any = None
    if chosen.needs_user_model:
        if user_model in (None, SCRIPTED_USER):
            models = [e.name for e in entries if e.kind != "scripted"]
            if models:
                raise typer.BadParameter(
                    f"policy {models[0]!r} is a model, and the scripted customer only suits scripted policies: "
                    "pass --user-model SPEC (e.g. anthropic:claude-…)",
                    param_hint="--user-model",
                )
            user = chosen.default_user()
        else:
            try:
                user = make_chat_model(user_model)
            except (ValueError, LLMError, ModuleNotFoundError) as exc:
                raise as_usage_error(exc, "--user-model") from None
    sampling = {"temperature": temperature} if temperature is not None else None
    settings = BootstrapSettings(resamples=resamples, confidence=confidence, seed=seed)
    with console.status("evaluating") as status:
        played = {"n": 0}

        def progress(name: str, record: Any) -> None:
            played["n"] += 1
            status.update(f"evaluating {name}: {played['n']} episodes played this run")

        try:
            results = evaluate(
                chosen, entries, out, trials=trials, user_model=user, bootstrap=settings, concurrency=concurrency,
                max_steps=max_steps, sampling=sampling, on_episode=progress, workers=workers,
                spot_check_share=DEFAULT_SPOT_CHECK_SHARE if spot_checks is None else spot_checks,
            )  # fmt: skip
        except (LLMError, WorkerFailed) as exc:
            print_error(f"{exc} (finished episodes are kept; rerun to resume)", "evaluation stopped:")
            raise typer.Exit(2) from None
        except ValueError as exc:
            raise typer.BadParameter(str(exc).splitlines()[0], param_hint="--out") from None
    _report(console, results, out)


def _report(console: Any, results: Any, out: Path) -> None:
    """The tables, then one ``error:`` line per policy whose episodes failed to run, and exit 1 if any did."""
    from .evaluate_table import failure_lines, print_results

    print_results(console, results, out)
    failures = failure_lines(results)
    for line in failures:
        print_error(line)
    if failures:
        raise typer.Exit(1)
