"""``trace-envs baseline gepa``: GEPA prompt optimisation of the capability instructions on a rollout budget."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .baseline import baseline_app
from .env_args import (
    EnvOptionOption,
    ImportOption,
    check_env_options,
    parse_options,
    resolve_env_ids,
    sampling_options,
)
from .errors import as_usage_error, print_error
from .rollout import default_cache_dir, parse_seeds


@baseline_app.command("gepa")
def gepa_command(
    env: Annotated[
        list[str],
        typer.Option(
            "--env", "-e", metavar="ENV_ID", help="Env whose episodes score a candidate (repeat for several)."
        ),
    ],
    policy: Annotated[
        str,
        typer.Option(
            "--policy", "-p", metavar="SPEC", help="Task model: anthropic:... | openai:<url>#<model> | hf:..."
        ),
    ],
    reflection_model: Annotated[
        str, typer.Option(metavar="SPEC", help="GEPA's reflection model (the paper: the policy model itself).")
    ],
    budget: Annotated[int, typer.Option(min=1, metavar="ROLLOUTS", help="Episodes in all; no more are run.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Output folder; a rerun resumes from its episodes.")
    ],
    train_seeds: Annotated[str, typer.Option(metavar="SEEDS", help="Seeds of the reflection minibatches.")] = "0-199",
    val_seeds: Annotated[
        str, typer.Option(metavar="SEEDS", help="Seeds candidates are ranked on (per env).")
    ] = "1000-1019",
    capability: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Capability to optimise (repeat; default: the envs' own)."),
    ] = None,
    seed_instructions: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Start from this instruction text instead.")
    ] = None,
    minibatch: Annotated[int, typer.Option(min=1, help="Episodes per reflection minibatch.")] = 3,
    selection: Annotated[str, typer.Option(metavar="pareto|current_best", help="How GEPA picks a parent.")] = "pareto",
    seed: Annotated[int, typer.Option(help="GEPA's random seed.")] = 0,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    user_model: Annotated[str | None, typer.Option(metavar="SPEC", help="Model spec of an LLM-played user.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Task model sampling temperature.")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Max tokens per task model answer.")] = None,
    reflection_temperature: Annotated[float, typer.Option(help="Reflection sampling temperature.")] = 0.7,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, help="Episodes in flight at once.")] = 16,
    max_steps: Annotated[int | None, typer.Option(min=1, help="Stop an episode after this many agent turns.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before a model request times out (then retried).")] = 120.0,
    cache_dir: Annotated[
        str | None,
        typer.Option(help="Response cache folder \\[default: $TRACE_ENVS_CACHE_DIR or ~/.cache/trace-envs/responses]"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
) -> None:
    """Evolve the capability instructions in the agent's system prompt with GEPA, spending at most --budget episodes.

    Writes OUT/best_instructions.txt, OUT/candidates.json (every candidate, its scores and lineage),
    OUT/baseline.json and OUT/episodes/. Exits 1 when the reflection model failed (the best candidate so far is written).
    """
    from pydantic import ValidationError
    from rich.console import Console

    from trace_envs.baselines.gepa import GepaConfig, run_gepa
    from trace_envs.llm import LLMError
    from trace_envs.problems import validation_problems

    console = Console()
    env_ids = resolve_env_ids(env, imports)
    env_kwargs = parse_options(option)
    for env_id in dict.fromkeys(env_ids):
        check_env_options(env_id, env_kwargs)
    sampling = sampling_options(temperature, max_tokens)
    if selection not in ("pareto", "current_best"):
        raise typer.BadParameter(f"expected pareto or current_best, got {selection!r}", param_hint="--selection")
    try:
        config = GepaConfig(
            env_ids=env_ids,
            policy=policy,
            reflection_model=reflection_model,
            budget=budget,
            train_seeds=parse_seeds(train_seeds),
            val_seeds=parse_seeds(val_seeds),
            env_kwargs=env_kwargs,
            capabilities=capability or [],
            seed_instructions=_seed_text(seed_instructions),
            minibatch_size=minibatch,
            candidate_selection=selection,  # type: ignore[arg-type]
            seed=seed,
            sampling=sampling,
            reflection_sampling={"temperature": reflection_temperature},
            user_model=user_model,
            model_options={"timeout_s": timeout, "cache_dir": None if no_cache else cache_dir or default_cache_dir()},
            concurrency=concurrency,
            max_steps=max_steps,
        )
    except ValidationError as exc:
        raise typer.BadParameter(validation_problems(exc)) from None
    _check(config)
    console.print(
        f"GEPA on {', '.join(env_ids)}: budget {budget} episodes, {len(config.training_jobs())} training and "
        f"{len(config.validation_jobs())} validation episodes; log in {out / 'gepa_log.txt'}"
    )
    try:
        outcome = run_gepa(config, out)
    except LLMError as exc:  # the task model failed for good; finished episodes are in OUT/episodes/
        print_error(str(exc), "GEPA stopped:")
        raise typer.Exit(2) from None
    _print_outcome(console, outcome, budget, out)


def _seed_text(path: Path | None) -> str | None:
    """The --seed-instructions text (None without the option); a missing file is a usage error."""
    if path is None:
        return None
    if not path.is_file():
        raise typer.BadParameter(f"no file {str(path)!r}", param_hint="--seed-instructions")
    return path.read_text(encoding="utf-8")


def _check(config: Any) -> None:
    """Every check GEPA's config gets before an episode runs, each failure naming its option."""
    from trace_envs.baselines.gepa import (
        check_config,
        policy_config,
        reflection_config,
        seed_candidate,
        user_model_config,
    )
    from trace_envs.llm import LLMError

    checks = (
        (check_config, "--budget"),
        (seed_candidate, "--capability"),
        (policy_config, "--policy"),
        (reflection_config, "--reflection-model"),
        (user_model_config, "--user-model"),
    )
    for check, hint in checks:
        try:
            check(config)
        except (ValueError, LLMError) as exc:
            raise as_usage_error(exc, hint) from None


def _print_outcome(console: Any, outcome: Any, budget: int, out: Path) -> None:
    """The seed and best validation scores, the episodes used, where the best instructions are; exit 1 when
    the reflection model failed (the best candidate so far is written)."""
    run = outcome.run
    console.print(
        f"validation score {outcome.seed_score:.3f} (seed) -> {outcome.best_score:.3f} (best of {outcome.candidates} "
        f"candidates); {run.rollouts_used} of {budget} episodes used"
    )
    console.print(f"best instructions: {out / run.artifact}")
    if outcome.reflection_error is not None:
        print_error(f"so GEPA stopped early: {outcome.reflection_error}", "the reflection model failed,")
        raise typer.Exit(1)
