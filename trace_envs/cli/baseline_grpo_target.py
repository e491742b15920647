"""``trace-envs baseline grpo-target``: GRPO directly on a target env, on a rollout budget."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .baseline import baseline_app
from .baseline_grpo import (
    BatchOption,
    BudgetOption,
    ConfigOption,
    GenerationsOption,
    GroupsOption,
    LearningRateOption,
    LengthOption,
    ResumeOption,
    checked_budget,
    grpo_config,
)
from .checks import checked_model
from .env_args import EnvOptionOption, ImportOption, parse_options, resolve_env_ids
from .progress import step_progress

console = Console()


@baseline_app.command("grpo-target")
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
    num_generations: GenerationsOption = None,
    groups: GroupsOption = None,
    batch_size: BatchOption = None,
    max_completion_length: LengthOption = None,
    learning_rate: LearningRateOption = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    resume: ResumeOption = True,
) -> None:
    """GRPO on the target env itself (the paper's "GRPO on target"), stopping at --budget rollouts.

    Example: trace-envs baseline grpo-target --env trace/device-v0 --model ./tiny --out runs/grpo-target --budget 4
    --num-generations 2 --batch-size 2
    """
    from trace_envs.baselines.grpo_target import grpo_target
    from trace_envs.training.bridge import make_conversation_env

    from .train import _cpu_threads

    (env_id,) = resolve_env_ids([env], imports)
    knobs = parse_options(option)
    cfg = grpo_config(
        config,
        num_generations=num_generations,
        groups_per_step=groups,
        per_device_train_batch_size=batch_size,
        max_completion_length=max_completion_length,
        learning_rate=learning_rate,
    )
    steps = checked_budget(budget, cfg)
    try:  # constructor options and data; without a user model, a reset says whether the env needs one
        probe = make_conversation_env(env_id, **knobs, **({"user_model": user_model} if user_model else {}))
        if user_model is None:
            probe.reset(seed=0)
    except (TypeError, ValueError, OSError) as exc:
        first = str(exc).splitlines()[0]
        raise typer.BadParameter(f"{env_id}: {first}", param_hint="--env/--option/--user-model") from None
    checked_model(model)
    _cpu_threads()
    console.print(f"[bold]GRPO on target[/] {env_id} · model {model} · {steps} steps ({budget} rollouts) → {out}")
    with step_progress(console, steps) as progress:
        meta, run = grpo_target(
            env_id, model, out, budget, cfg, user_model=user_model, knobs=knobs, resume=resume, progress=progress
        )
    console.print(f"[green]saved[/] {out / run.artifact} · {meta.steps_done} steps · {run.rollouts_used} rollouts used")
