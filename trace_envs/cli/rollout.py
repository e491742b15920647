"""``trace-envs rollout``: play a policy on one or more envs for many seeds, concurrently, appending
each episode to a resumable JSONL trajectory store, with a progress bar and a summary table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from trace_envs.safe_text import shown

from .app import app
from .env_args import (
    EnvOptionOption,
    ImportOption,
    SpotChecksOption,
    check_env_options,
    parse_options,
    resolve_env_ids,
    sampling_options,
)
from .errors import as_usage_error, print_error
from .text import plural


def parse_seeds(text: str) -> list[int]:
    """``"0-9,20,30-32"`` -> [0..9, 20, 30, 31, 32] (order kept, duplicates dropped)."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        start, dash, end = part.partition("-")
        try:
            values = range(int(start), int(end) + 1) if dash else [int(part)]
        except ValueError:
            raise typer.BadParameter(f"expected seeds like '0-9,20', got {text!r}", param_hint="--seeds") from None
        seeds.extend(values)
    if not seeds:
        raise typer.BadParameter("no seeds given", param_hint="--seeds")
    return list(dict.fromkeys(seeds))


def default_cache_dir() -> str:
    return os.environ.get("TRACE_ENVS_CACHE_DIR", str(Path("~/.cache/trace-envs/responses").expanduser()))


@app.command("rollout")
def rollout_command(
    env: Annotated[
        list[str],
        typer.Option("--env", "-e", help="Env id (repeat for several), e.g. trace/order-cancel-v0 or MODULE:ENV_ID."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL trajectory store; an existing one is resumed.")],
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            "-p",
            help="oracle | noop | random | flawed | flawed:<cap>[,...] | anthropic:<model> | openai:<base_url>#<model> | hf:<path>\\[@<adapter>]",
        ),
    ] = "oracle",
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Seeds 0..N-1 (unless --seeds).")] = 10,
    seeds: Annotated[str | None, typer.Option(help="Explicit seeds, e.g. '0-9,20'.")] = None,
    samples: Annotated[int, typer.Option(min=1, help="Episodes per (env, seed), e.g. for pass^k.")] = 1,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, help="Episodes in flight at once.")] = 16,
    workers: Annotated[
        int,
        typer.Option(
            "--workers", "-w", min=1, help="Processes sharing the episodes (for hundreds in flight on a many-core box)."
        ),
    ] = 1,
    max_steps: Annotated[int | None, typer.Option(min=1, help="Stop an episode after this many agent turns.")] = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    user_model: Annotated[str | None, typer.Option(help="Model spec of the simulated user (LLM user).")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature of the policy model.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Max tokens per policy answer.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before a model request times out (then retried).")] = 120.0,
    cache_dir: Annotated[
        str | None,
        typer.Option(help="Response cache folder \\[default: $TRACE_ENVS_CACHE_DIR or ~/.cache/trace-envs/responses]"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    spot_checks: SpotChecksOption = None,
) -> None:
    """Roll out POLICY on every --env for N seeds and append the episodes to --out.

    Rerunning the same command resumes: finished (env, seed, sample, policy) episodes are skipped. Ctrl-C
    starts no new episode and lets the ones in flight finish into --out (with an hf: model, one generation at
    a time, that can take a while; a second Ctrl-C drops them), then exits 130. With --workers, Ctrl-C stops
    each worker process where it is. Exits 1 when every episode of the run failed.
    """
    from rich.console import Console

    from trace_envs.rollout import PolicySpec

    console = Console()
    if "=" in out.name and not out.exists():
        raise typer.BadParameter(
            f"{str(out)!r} looks like KEY=VALUE: env options go in --option KEY=VALUE (-o is --out)", param_hint="--out"
        )
    env_ids = resolve_env_ids(env, imports)
    seed_list = parse_seeds(seeds) if seeds is not None else list(range(episodes))
    jobs = _jobs(env_ids, seed_list, samples, parse_options(option))
    model_options: dict[str, Any] = {
        "timeout_s": timeout,
        "cache_dir": None if no_cache else cache_dir or default_cache_dir(),
    }
    sampling = sampling_options(temperature, max_tokens)
    runner, options = _policy(policy, user_model, workers, model_options, sampling)
    options.update(concurrency=concurrency, max_steps=max_steps)
    if spot_checks is not None:
        options["spot_check_share"] = spot_checks
    result = _run_with_progress(console, out, jobs, runner, options)
    if result.run is None:
        console.print(
            f"[yellow]interrupted:[/yellow] {result.finished.episodes} of {result.wanted} episodes are finished in "
            f"{out}; rerun the same command to run the rest"
        )
        raise typer.Exit(130)
    model_backed = PolicySpec.parse(result.spec).is_model
    print_summary(console, result.overall(), out, result.spec, model_backed)
    run = result.run
    console.print(
        f"this run: {run.episodes} episodes ({run.failed} failed, rerun on resume) in {run.wall_s:.1f}s; "
        f"{run.skipped} finished earlier" + (f"; cost ${run.usage.cost_usd:.4f}" if model_backed else "")
    )
    if result.failed:
        print_errors(console, result.failed)
    if result.all_failed:
        console.print(f"[red]every episode of this run failed[/red] (policy {result.spec}); see the errors above")
        raise typer.Exit(1)


def _jobs(env_ids: list[str], seeds: list[int], samples: int, env_kwargs: dict[str, Any]) -> list[Any]:
    """One job per (env, seed, sample), each with the --option env options (checked against each env first)."""
    from trace_envs.rollout import make_jobs

    for env_id in dict.fromkeys(env_ids):
        check_env_options(env_id, env_kwargs)
    jobs = make_jobs(env_ids, seeds, samples)
    for job in jobs:
        job.env_kwargs = dict(env_kwargs)
    return jobs


def _policy(
    policy: str, user_model: str | None, workers: int, model_options: dict[str, Any], sampling: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """What plays the episodes (a spec string for worker processes, else a factory sharing one client) and the
    run options that go with it (its recorded spec, the user model); a bad spec is a usage error."""
    from trace_envs.llm import LLMError, make_chat_model
    from trace_envs.rollout import checked_policy_spec, policy_factory

    bad_spec = (ValueError, ModuleNotFoundError, LLMError, FileNotFoundError)
    options: dict[str, Any] = {}
    runner: Any
    try:
        if workers > 1:  # each worker builds its own client from the spec
            runner, spec = policy, checked_policy_spec(policy, model_options)
            options.update(workers=workers, model_options=model_options, sampling=sampling)
        else:
            runner, spec = policy_factory(policy, model_options=model_options, sampling=sampling)
    except bad_spec as exc:
        raise as_usage_error(exc, "--policy") from None
    try:
        options["user_model"] = make_chat_model(user_model, **model_options) if user_model else None
    except bad_spec as exc:
        raise as_usage_error(exc, "--user-model") from None
    options["spec"] = spec
    return runner, options


def _run_with_progress(console: Any, out: Path, jobs: list[Any], runner: Any, options: dict[str, Any]) -> Any:
    """:func:`trace_envs.rollout.rollout_into_store` under a progress bar of the pending episodes; a model or
    worker failure stops the run with exit 2 (the finished episodes are in the store, a rerun resumes)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from trace_envs.llm import LLMError
    from trace_envs.rollout import EpisodeRecord, rollout_into_store
    from trace_envs.rollout.workers import WorkerFailed

    columns = (
        TextColumn("[bold]rollout"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )  # fmt: skip
    counts = {"ok": 0, "failed": 0}
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("episodes", total=None, status="")

        def on_episode(record: EpisodeRecord) -> None:
            counts["ok" if record.success else "failed"] += 1
            progress.update(bar, advance=1, status=f"pass {counts['ok']}/{counts['ok'] + counts['failed']}")

        def on_start(pending: int) -> None:
            progress.update(bar, total=pending)

        def on_interrupt(in_flight: int) -> None:
            progress.console.print(
                f"[yellow]Ctrl-C:[/yellow] finishing the {plural(in_flight, 'episode')} in flight, starting no "
                "more (Ctrl-C again drops them)"
            )

        try:
            return rollout_into_store(
                out, jobs, runner, on_start=on_start, on_episode=on_episode, keep_interrupted=True,
                on_interrupt=on_interrupt, **options,
            )  # fmt: skip
        except (LLMError, WorkerFailed) as exc:
            print_error(str(exc), "rollout stopped:")
            raise typer.Exit(2) from None


def print_errors(console: Any, errored: list[Any], limit: int = 3) -> None:
    """The first line of the first ``limit`` distinct episode errors, with where each happened."""
    from trace_envs.rollout import first_errors

    lines, others = first_errors(errored, limit)
    console.print(f"[red]{len(errored)} episodes failed[/red]; first errors:")
    for line in lines:
        console.print(f"  {shown(line)}", markup=False, highlight=False)  # a box's text: escaped, one line
    if others:
        console.print(f"  … and {others} other errors (the store's records have the tracebacks)")


def print_summary(console: Any, summary: Any, out: Path, spec: str, model_backed: bool) -> None:
    """The per-env and total table (episodes, errors, pass rate, mean reward, tokens)."""
    from rich.table import Table

    table = Table(title=f"{spec} → {out}")
    for column in ("env", "episodes", "errors", "pass rate", "mean reward", "tokens"):
        table.add_column(column, justify="left" if column == "env" else "right")
    for env_id, row in summary.per_env.items():
        finished = row["episodes"] - row["failed"]
        table.add_row(
            env_id,
            str(int(row["episodes"])),
            str(int(row["failed"])),
            f"{row['successes'] / finished:.1%}" if finished else "-",
            f"{row['reward_sum'] / finished:.3f}" if finished else "-",
            f"{int(row['tokens']):,}",
        )
    tokens = summary.usage.input_tokens + summary.usage.output_tokens
    table.add_row(
        "[bold]total",
        str(summary.episodes),
        str(summary.failed),
        f"{summary.pass_rate:.1%}",
        f"{summary.mean_reward:.3f}",
        f"{tokens:,}",
    )
    console.print(table)
