"""``trace-envs baseline multi-capability``: one adapter with GRPO on a mixture of capability envs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .baseline import baseline_app, parse_weights
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
from .checks import checked_env, checked_model
from .env_args import EnvOptionOption, ImportOption, parse_options, resolve_env_ids
from .progress import step_progress

console = Console()


@baseline_app.command("multi-capability")
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
    num_generations: GenerationsOption = None,
    groups: GroupsOption = None,
    batch_size: BatchOption = None,
    max_completion_length: LengthOption = None,
    learning_rate: LearningRateOption = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    resume: ResumeOption = True,
) -> None:
    """GRPO on a uniform or weighted mixture of capability envs (the paper's "Multi-Capability GRPO").

    Groups go to the envs in proportion to the weights by largest remainder; every group is one env
    and one seed. The run stops at --budget rollouts.

    Example: trace-envs baseline multi-capability -e trace/order-cancel-v0 -e trace/datetime-v0 --model ./tiny
    --out runs/multi --budget 8 --num-generations 2 --batch-size 2
    """
    from trace_envs.baselines.mixture import allocate_groups, check_weights
    from trace_envs.baselines.multi_capability import multi_capability

    from .train import _cpu_threads

    env_ids = resolve_env_ids(env, imports)
    knobs = parse_options(option)
    try:
        mix = check_weights(env_ids, parse_weights(weights))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--env/--weights") from None
    for env_id in env_ids:
        checked_env(env_id, knobs, "--env")
    cfg = grpo_config(
        config,
        num_generations=num_generations,
        groups_per_step=groups,
        per_device_train_batch_size=batch_size,
        max_completion_length=max_completion_length,
        learning_rate=learning_rate,
    )
    steps = checked_budget(budget, cfg)
    checked_model(model)
    _cpu_threads()
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
