"""``trace-envs baseline grpo-target``: GRPO directly on a target env, on a rollout budget."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .baseline import baseline_app
from .baseline_grpo import BudgetOption, ResumeOption, checked_budget, grpo_baseline_options
from .checks import checked_model
from .env_args import EnvOptionOption, ImportOption, parse_options, resolve_env_ids
from .progress import step_progress
from .train_options import ConfigOption, TrainOptions, train_config

console = Console()


@baseline_app.command("grpo-target")
@grpo_baseline_options
def grpo_target_command(
    env: Annotated[
        str,
        typer.Option(
            "--env",
            "-e",
            metavar="ENV_ID",
            help="Target env: trace/tau2-retail-v0, trace/tau2-airline-v0, trace/device-v0.",
        ),
    ],
    model: Annotated[str, typer.Option(metavar="MODEL", help="Base model: a local directory or a hub id.")],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Run folder (adapter/, baseline.json).")],
    budget: BudgetOption,
    user_model: Annotated[
        str | None,
        typer.Option(
            metavar="SPEC",
            help="Model that plays the user (openai:URL#MODEL, anthropic:MODEL, hf:PATH); tau2 needs one.",
        ),
    ] = None,
    config: ConfigOption = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    resume: ResumeOption = True,
    *,
    train_options: TrainOptions,
) -> None:
    """GRPO on the target env itself (the paper's "GRPO on target"), stopping at --budget rollouts.

    Example: trace-envs baseline grpo-target --env trace/device-v0 --model ./tiny --out runs/grpo-target --budget 4
    --num-generations 2 --per-device-train-batch-size 2
    """
    from trace_envs.baselines.grpo_target import grpo_target
    from trace_envs.training import cpu_threads
    from trace_envs.training.bridge import make_conversation_env

    (env_id,) = resolve_env_ids([env], imports)
    knobs = parse_options(option)
    cfg = train_config(config, train_options)
    steps = checked_budget(budget, cfg)
    try:  # constructor options and data; without a user model, a reset says whether the env needs one
        probe = make_conversation_env(env_id, **knobs, **({"user_model": user_model} if user_model else {}))
        if user_model is None:
            probe.reset(seed=0)
    except (TypeError, ValueError, OSError) as exc:
        first = str(exc).splitlines()[0]
        raise typer.BadParameter(f"{env_id}: {first}", param_hint="--env/--option/--user-model") from None
    checked_model(model)
    cpu_threads()
    console.print(f"[bold]GRPO on target[/] {env_id} · model {model} · {steps} steps ({budget} rollouts) → {out}")
    with step_progress(console, steps) as progress:
        meta, run = grpo_target(
            env_id, model, out, budget, cfg, user_model=user_model, knobs=knobs, resume=resume, progress=progress
        )
    console.print(f"[green]saved[/] {out / run.artifact} · {meta.steps_done} steps · {run.rollouts_used} rollouts used")
