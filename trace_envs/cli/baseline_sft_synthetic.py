"""``trace-envs baseline sft-synthetic``: SFT of one LoRA adapter on successful capability-env trajectories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from .baseline import baseline_app
from .checks import checked_env, checked_model
from .env_args import EnvOptionOption, ImportOption, parse_options, resolve_env_ids

console = Console()


@baseline_app.command("sft-synthetic")
def sft_synthetic_command(
    env: Annotated[
        list[str],
        typer.Option("--env", "-e", metavar="ENV_ID", help="Capability env to collect on (repeat for several)."),
    ],
    model: Annotated[str, typer.Option(metavar="MODEL", help="Base model: a local directory or a hub id.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Run folder (rollouts.jsonl, adapter/, baseline.json).")
    ],
    budget: Annotated[int, typer.Option(metavar="ROLLOUTS", help="Episodes to roll out in all, successful or not.")],
    policy: Annotated[
        str,
        typer.Option(
            metavar="SPEC", help="Policy that collects: a model spec (openai:URL#MODEL, hf:PATH, ...) or oracle."
        ),
    ] = "oracle",
    epochs: Annotated[float | None, typer.Option(metavar="N", help="Passes over the successes (default 3).")] = None,
    max_steps: Annotated[int | None, typer.Option(metavar="N", help="Optimiser steps (overrides --epochs).")] = None,
    learning_rate: Annotated[float | None, typer.Option(metavar="LR", help="Learning rate (default 1e-4).")] = None,
    batch_size: Annotated[int | None, typer.Option(metavar="B", help="Trajectories per batch (default 4).")] = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
) -> None:
    """Collect --budget episodes on the capability envs, then fine-tune one LoRA adapter with TRL's
    SFTTrainer on the successful ones (loss on the assistant's turns only). Rerunning resumes the
    collection from OUT/rollouts.jsonl.

    Example: trace-envs baseline sft-synthetic -e trace/order-cancel-v0 --model ./tiny --out runs/sft --budget 16
    """
    from pydantic import ValidationError

    from trace_envs.baselines.sft_synthetic import SFTSettings, sft_synthetic
    from trace_envs.problems import validation_problems
    from trace_envs.rollout import checked_policy_spec
    from trace_envs.training import cpu_threads

    env_ids = resolve_env_ids(env, imports)
    knobs = parse_options(option)
    for env_id in env_ids:
        checked_env(env_id, knobs, "--env")
    if budget < 1:
        raise typer.BadParameter(f"must be a positive number of episodes, got {budget}", param_hint="--budget")
    try:
        checked_policy_spec(policy)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--policy") from None
    overrides: dict[str, Any] = {
        "epochs": epochs,
        "max_steps": max_steps,
        "learning_rate": learning_rate,
        "batch_size": batch_size,
    }
    try:
        settings = SFTSettings(policy=policy, **{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise typer.BadParameter(validation_problems(exc), param_hint="--epochs/--max-steps/--learning-rate") from None
    checked_model(model)
    cpu_threads()
    console.print(f"[bold]SFT synthetic[/] on {', '.join(env_ids)} · {budget} episodes with {policy} → {out}")
    try:
        meta, run = sft_synthetic(
            env_ids, model, out, budget, settings, knobs={env_id: knobs for env_id in env_ids} if knobs else None
        )
    except ValueError as exc:  # no successful trajectory to train on
        raise typer.BadParameter(str(exc), param_hint="--budget/--policy") from None
    console.print(
        f"[green]saved[/] {out / run.artifact} · {run.config['trained_on']}/{run.rollouts_used} episodes trained on "
        f"({run.config['successes']} successes) · {meta.steps_done} steps"
    )
