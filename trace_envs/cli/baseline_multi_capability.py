"""``trace-envs baseline multi-capability``: one adapter with GRPO on a mixture of capability envs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .baseline import baseline_app, parse_weights
from .baseline_grpo import BudgetOption, ResumeOption, checked_budget, grpo_baseline_options
from .checks import checked_env, checked_model
from .env_args import EnvOptionOption, ImportOption, parse_options, resolve_env_ids
from .progress import step_progress
from .train_options import ConfigOption, TrainOptions, train_config

console = Console()


@baseline_app.command("multi-capability")
@grpo_baseline_options
def multi_capability_command(
    env: Annotated[
        list[str],
        typer.Option("--env", "-e", metavar="ENV_ID", help="Capability env of the mixture (repeat; each once)."),
    ],
    model: Annotated[str, typer.Option(metavar="MODEL", help="Base model: a local directory or a hub id.")],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Run folder (adapter/, baseline.json).")],
    budget: BudgetOption,
    weights: Annotated[
        str | None,
        typer.Option(metavar="W1,W2,...", help="One weight per --env, in order (default: uniform)."),
    ] = None,
    config: ConfigOption = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    resume: ResumeOption = True,
    *,
    train_options: TrainOptions,
) -> None:
    """GRPO on a uniform or weighted mixture of capability envs (the paper's "Multi-Capability GRPO").

    Groups go to the envs in proportion to the weights by largest remainder; every group is one env
    and one seed. The run stops at --budget rollouts.

    Example: trace-envs baseline multi-capability -e trace/order-cancel-v0 -e trace/datetime-v0 --model ./tiny
    --out runs/multi --budget 8 --num-generations 2 --per-device-train-batch-size 2
    """
    from trace_envs.baselines.mixture import allocate_groups, check_weights
    from trace_envs.baselines.multi_capability import multi_capability
    from trace_envs.training import cpu_threads

    env_ids = resolve_env_ids(env, imports)
    knobs = parse_options(option)
    try:
        mix = check_weights(env_ids, parse_weights(weights))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--env/--weights") from None
    for env_id in env_ids:
        checked_env(env_id, knobs, "--env")
    cfg = train_config(config, train_options)
    steps = checked_budget(budget, cfg)
    checked_model(model)
    cpu_threads()
    counts = allocate_groups(env_ids, mix, steps * cfg.groups_per_step)
    console.print(
        f"[bold]multi-capability GRPO[/] · model {model} · {steps} steps ({budget} rollouts) → {out}\n"
        + "\n".join(f"  {env_id}: {n} group(s)" for env_id, n in counts.items())
    )
    with step_progress(console, steps) as progress:
        meta, run = multi_capability(
            env_ids,
            model,
            out,
            budget,
            cfg,
            weights=mix,
            knobs={env_id: knobs for env_id in env_ids} if knobs else None,
            resume=resume,
            progress=progress,
        )
    console.print(f"[green]saved[/] {out / run.artifact} · {meta.steps_done} steps · {run.rollouts_used} rollouts used")
