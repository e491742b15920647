"""``trace-envs rollout``: play a policy on one or more envs for many seeds, concurrently, appending
each episode to a resumable JSONL trajectory store, with a progress bar and a summary table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app


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
        list[str], typer.Option("--env", "-e", help="Env id (repeat for several), e.g. trace/order-cancel-v0.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL trajectory store; an existing one is resumed.")],
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            "-p",
            help="oracle | noop | random | flawed:<cap>[,…] | anthropic:<model> | openai:<base_url>#<model> | hf:<path>\\[@<adapter>]",
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
    option: Annotated[
        list[str] | None, typer.Option("--option", help="Env constructor option KEY=VALUE (repeatable).")
    ] = None,
    user_model: Annotated[str | None, typer.Option(help="Model spec of the simulated user (LLM user).")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature of the policy model.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Max tokens per policy answer.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before a model request times out (then retried).")] = 120.0,
    cache_dir: Annotated[
        str | None,
        typer.Option(help="Response cache folder \\[default: $TRACE_ENVS_CACHE_DIR or ~/.cache/trace-envs/responses]"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
) -> None:
    """Roll out POLICY on every --env for N seeds and append the episodes to --out.

    Rerunning the same command resumes: finished (env, seed, sample, policy) episodes are skipped.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    import trace_envs
    from trace_envs.capabilities import check_policy_capabilities
    from trace_envs.llm import LLMError, is_model_spec, make_chat_model
    from trace_envs.rollout import (
        EpisodeRecord,
        RolloutSummary,
        TrajectoryStore,
        checked_policy_spec,
        load_episodes,
        make_jobs,
        policy_factory,
        run_rollouts,
    )
    from trace_envs.rollout.workers import WorkerFailed

    from .envs import parse_options

    console = Console()
    registered = trace_envs.list_envs()
    for env_id in env:
        if env_id not in registered:
            raise typer.BadParameter(f"{env_id!r} is not a registered env; see `trace-envs list`", param_hint="--env")
    seed_list = parse_seeds(seeds) if seeds is not None else list(range(episodes))
    env_kwargs = parse_options(option)
    sampling: dict[str, Any] = {}
    if temperature is not None:
        sampling["temperature"] = temperature
    if max_tokens is not None:
        sampling["max_tokens"] = max_tokens
    model_options: dict[str, Any] = {
        "timeout_s": timeout,
        "cache_dir": None if no_cache else cache_dir or default_cache_dir(),
    }
    try:
        check_policy_capabilities(policy)
        if workers > 1:  # each worker builds its own client from the spec
            factory, spec = None, checked_policy_spec(policy, model_options)
        else:
            factory, spec = policy_factory(policy, model_options=model_options, sampling=sampling)
        user = make_chat_model(user_model, **model_options) if user_model else None
    except (ValueError, ModuleNotFoundError, LLMError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--policy/--user-model") from None
    jobs = make_jobs(env, seed_list, samples)
    for job in jobs:
        job.env_kwargs = dict(env_kwargs)
    with TrajectoryStore(out) as store:
        finished = store.finished_keys()
        pending = sum((j.env_id, j.seed, j.sample, spec) not in finished for j in jobs)
        columns = (
            TextColumn("[bold]rollout"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console, transient=False) as progress:
            bar = progress.add_task("episodes", total=pending, status="")
            counts = {"ok": 0, "failed": 0}
            errored: list[EpisodeRecord] = []

            def on_episode(record: EpisodeRecord) -> None:
                counts["ok" if record.success else "failed"] += 1
                if record.error is not None:
                    errored.append(record)
                progress.update(bar, advance=1, status=f"pass {counts['ok']}/{counts['ok'] + counts['failed']}")

            options: dict[str, Any] = {
                "store": store, "concurrency": concurrency, "max_steps": max_steps, "user_model": user,
                "on_episode": on_episode,
            }  # fmt: skip
            try:
                if factory is None:
                    summary = run_rollouts(
                        jobs, policy, workers=workers, model_options=model_options, sampling=sampling, **options
                    )
                else:
                    summary = run_rollouts(jobs, factory, policy_spec=spec, **options)
            except (LLMError, WorkerFailed) as exc:  # finished episodes are in the store; a rerun resumes
                console.print(f"[red]rollout stopped:[/red] {exc}")
                raise typer.Exit(2) from None
    wanted = {(j.env_id, j.seed, j.sample, spec) for j in jobs}
    overall = RolloutSummary()
    for record in load_episodes(out):
        if record.key in wanted:
            overall.add(record)
    for record in errored:
        overall.add(record)
    print_summary(console, overall, out, spec, is_model_spec(spec))
    console.print(
        f"this run: {summary.episodes} episodes ({summary.failed} failed, rerun on resume) in {summary.wall_s:.1f}s; "
        f"{summary.skipped} finished earlier" + (f"; cost ${summary.usage.cost_usd:.4f}" if is_model_spec(spec) else "")
    )


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
