"""The ``gepa`` baseline: the `gepa` package evolves the capability instructions in the agent's system prompt,
on the same rollout budget as the training methods (the paper's prompt-optimisation comparison).

The seed candidate is one component per capability (its description), or a text the user gives; a candidate's
instructions reach the policy in a ``<skill_instructions>`` block (:mod:`trace_envs.rollout.instructions`).
Episodes run through :class:`~.gepa_adapter.RolloutAdapter` and each is taken from ``budget``: GEPA's own
metric-call stop fires only between iterations, so an extra stopper ends the search while the next
iteration might not fit (at most 2 minibatches + one validation pass), and the budget refuses any episode past
it. Writes ``best_instructions.txt``, ``candidates.json``, ``baseline.json`` and ``episodes/<digest>.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.llm import ModelConfig
from trace_envs.rollout import EpisodeJob

from .gepa_adapter import EpisodeBudget, RolloutAdapter, instructions_digest, render_instructions
from .record import BaselineRun, save_baseline_run
from .reflection import ReflectionModel

BEST_FILE = "best_instructions.txt"
CANDIDATES_FILE = "candidates.json"
LOG_FILE = "gepa_log.txt"
SEED_COMPONENT = "instructions"
"""The component name of a seed text the user gives (instead of capability descriptions)."""


class GepaConfig(BaseModel):
    """Settings of one GEPA run. The paper's run: 5,000 episodes per capability, 200 training seeds, the
    policy model itself reflecting at temperature 0.7."""

    model_config = ConfigDict(extra="forbid")

    env_ids: list[str] = Field(min_length=1, description="Envs whose episodes score a candidate.")
    policy: str = Field(
        description="Task model spec (anthropic:…, openai:…#…, hf:…): the policy that reads the prompt."
    )
    reflection_model: str = Field(description="Model spec of GEPA's reflection model.")
    budget: int = Field(ge=1, description="Episodes in all (seed validation, minibatches, validations).")
    train_seeds: list[int] = Field(min_length=1, description="Seeds of the minibatches GEPA reflects on.")
    val_seeds: list[int] = Field(min_length=1, description="Seeds of the validation set candidates are ranked on.")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="Options of every env.")
    capabilities: list[str] = Field(
        default_factory=list,
        description="Capabilities to optimise (default: the envs' own); seeded with their descriptions.",
    )
    seed_instructions: str | None = Field(default=None, description="A seed text (one component) instead.")
    minibatch_size: int = Field(default=3, ge=1, description="Episodes per reflection minibatch.")
    candidate_selection: Literal["pareto", "current_best"] = "pareto"
    seed: int = Field(default=0, description="GEPA's random seed (minibatches, parent choice).")
    sampling: dict[str, Any] = Field(default_factory=dict, description="Task model sampling params.")
    reflection_sampling: dict[str, Any] = Field(default_factory=lambda: {"temperature": 0.7})
    user_model: str | None = Field(default=None, description="Model spec of an LLM-played user (default: scripted).")
    model_options: dict[str, Any] = Field(
        default_factory=dict, description="ModelConfig fields of every client (timeout_s, cache_dir …)."
    )
    concurrency: int = Field(default=16, ge=1)
    max_steps: int | None = Field(default=None, ge=1)

    def iteration_cost(self) -> int:
        """The most episodes one GEPA iteration takes: parent and child on a minibatch, then a validation."""
        return 2 * self.minibatch_size + len(self.validation_jobs())

    def minimum_budget(self) -> int:
        """The seed candidate's validation plus one iteration."""
        return len(self.validation_jobs()) + self.iteration_cost()

    def training_jobs(self) -> list[EpisodeJob]:
        return [
            EpisodeJob(env_id=e, seed=s, env_kwargs=dict(self.env_kwargs))
            for e in self.env_ids
            for s in self.train_seeds
        ]

    def validation_jobs(self) -> list[EpisodeJob]:
        return [
            EpisodeJob(env_id=e, seed=s, env_kwargs=dict(self.env_kwargs)) for e in self.env_ids for s in self.val_seeds
        ]


class GepaOutcome(BaseModel):
    """What a run produced: its record, the best instructions and why it stopped."""

    run: BaselineRun
    best_instructions: str
    best_score: float
    seed_score: float
    candidates: int
    reflection_error: str | None = None


def seed_candidate(config: GepaConfig) -> dict[str, str]:
    """The starting candidate: the user's text, else one component per capability with its description."""
    if config.seed_instructions is not None:
        return {SEED_COMPONENT: config.seed_instructions}
    from trace_envs.registry.capabilities import get_capability

    names = list(dict.fromkeys(config.capabilities or [env_capability(e) for e in config.env_ids]))
    try:
        return {name: get_capability(name).description for name in names}
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None


def env_capability(env_id: str) -> str:
    """The capability a registered capability env (run here or boxed) declares; a target env is not one (a
    ``ValueError``)."""
    from trace_envs.core import Capability
    from trace_envs.registry import TARGET_KINDS, env_class, env_kind

    capability = getattr(env_class(env_id), "capability", None)
    if env_kind(env_id) in TARGET_KINDS or not isinstance(capability, Capability):
        raise ValueError(
            f"{env_id} declares no capability to seed the instructions with: name capabilities "
            "(e.g. unit_conversion) or give a seed instruction text"
        )
    return capability.name


def check_config(config: GepaConfig) -> None:
    """Refuse, before any episode, a budget that fits no iteration or a minibatch larger than the training set."""
    if config.minibatch_size > len(config.training_jobs()):
        raise ValueError(
            f"minibatch_size {config.minibatch_size} is larger than the training set "
            f"({len(config.training_jobs())} episodes): give more train seeds or a smaller minibatch"
        )
    if config.budget < config.minimum_budget():
        raise ValueError(
            f"budget {config.budget} fits no GEPA iteration: the seed's validation takes {len(config.validation_jobs())} "
            f"episodes and one iteration up to {config.iteration_cost()}; give a budget >= {config.minimum_budget()} "
            "or fewer validation seeds"
        )


class BudgetStopper:
    """Stops GEPA while the next iteration might not fit in what is left of the budget, or once the
    reflection model has failed."""

    def __init__(self, budget: EpisodeBudget, iteration_cost: int, reflection: ReflectionModel):
        self.budget = budget
        self.iteration_cost = iteration_cost
        self.reflection = reflection

    def __call__(self, gepa_state: Any) -> bool:
        return self.budget.remaining < self.iteration_cost or self.reflection.failure is not None


class FileLog:
    """GEPA's logger, writing its lines to a file instead of stdout."""

    def __init__(self, path: Path):
        self.path = path
        path.write_text("", encoding="utf-8")

    def log(self, message: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(f"{message}\n")


def policy_config(config: GepaConfig) -> ModelConfig:
    """The task model's config; a scripted policy (which never reads the prompt) or a bad spec is a ``ValueError``,
    a hosted API without its key a ``MissingAPIKey``."""
    from trace_envs.rollout import PolicySpec

    parsed = PolicySpec.parse(config.policy, **config.model_options)
    if parsed.model is None:
        raise ValueError(
            f"policy {config.policy!r} is scripted and never reads the system prompt, so no instruction can change "
            "it; GEPA needs a model policy (anthropic:<model>, openai:<base_url>#<model>, hf:<path>)"
        )
    parsed.model.check_api_key()
    return parsed.model


def reflection_config(config: GepaConfig) -> ModelConfig:
    """The reflection model's config (a ``ValueError`` for a bad spec, ``MissingAPIKey`` without its key)."""
    model = ModelConfig.parse(config.reflection_model, **config.model_options)
    model.check_api_key()
    return model


def user_model_config(config: GepaConfig) -> ModelConfig | None:
    """The LLM user's config (``None``: the envs' scripted users); a bad spec is a ``ValueError``."""
    if config.user_model is None:
        return None
    model = ModelConfig.parse(config.user_model, **config.model_options)
    model.check_api_key()
    return model


def run_gepa(config: GepaConfig, out_dir: str | Path) -> GepaOutcome:
    """Run GEPA on ``config``'s envs and write the outputs in ``out_dir``; a bad config or model spec is a
    ``ValueError`` (a missing key a ``MissingAPIKey``) before any episode runs."""
    import gepa

    from trace_envs.llm import make_chat_model

    check_config(config)
    seed = seed_candidate(config)
    task_model, reflection_model, user_config = (
        policy_config(config),
        reflection_config(config),
        user_model_config(config),
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    budget = EpisodeBudget(config.budget)
    reflection = ReflectionModel(make_chat_model(reflection_model), config.reflection_sampling)
    user = make_chat_model(user_config) if user_config is not None else None
    adapter = RolloutAdapter(
        make_chat_model(task_model),
        episodes_dir=out / "episodes",
        budget=budget,
        sampling=config.sampling,
        user_model=user,
        concurrency=config.concurrency,
        max_steps=config.max_steps,
    )
    result: gepa.GEPAResult[dict[str, Any], int] = gepa.optimize(
        seed_candidate=seed,
        trainset=config.training_jobs(),
        valset=config.validation_jobs(),
        adapter=adapter,
        reflection_lm=reflection,
        candidate_selection_strategy=config.candidate_selection,
        reflection_minibatch_size=config.minibatch_size,
        max_metric_calls=config.budget,
        stop_callbacks=[BudgetStopper(budget, config.iteration_cost(), reflection)],
        logger=FileLog(out / LOG_FILE),
        seed=config.seed,
        perfect_score=1.0,
        use_merge=False,
        raise_on_exception=True,
    )
    return write_outputs(config, out, result, adapter, reflection)


def write_outputs(
    config: GepaConfig, out: Path, result: Any, adapter: RolloutAdapter, reflection: ReflectionModel
) -> GepaOutcome:
    """``best_instructions.txt``, ``candidates.json`` and ``baseline.json`` of a finished search."""
    best = render_instructions(result.candidates[result.best_idx])
    (out / BEST_FILE).write_text(best + "\n", encoding="utf-8")
    val_names = [f"{j.env_id}@{j.seed}" for j in config.validation_jobs()]
    candidates = []
    for index, candidate in enumerate(result.candidates):
        digest = instructions_digest(render_instructions(candidate))
        candidates.append(
            {
                "index": index,
                "components": candidate,
                "val_score": result.val_aggregate_scores[index],
                "val_scores": {val_names[i]: score for i, score in sorted(result.val_subscores[index].items())},
                "parents": result.parents[index],
                "found_after_episodes": result.discovery_eval_counts[index],
                "episodes": f"episodes/{digest}.jsonl",
            }
        )
    error = None if reflection.failure is None else f"{type(reflection.failure).__name__}: {reflection.failure}"
    summary = {
        "best_index": result.best_idx,
        "budget": config.budget,
        "episodes_used": adapter.budget.used,
        "gepa_metric_calls": result.total_metric_calls,
        "episodes_rolled_out": adapter.played.episodes,
        "episodes_from_earlier_runs": adapter.reused,
        "policy_usage": adapter.played.usage.model_dump(),
        "reflection": {"calls": reflection.calls, "usage": reflection.usage.model_dump(), "error": error},
        "candidates": candidates,
    }
    (out / CANDIDATES_FILE).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    run = BaselineRun(
        method="gepa",
        env_ids=list(config.env_ids),
        base_model=config.policy,
        budget=config.budget,
        rollouts_used=adapter.budget.used,
        artifact=BEST_FILE,
        config=recorded_config(config),
    )
    save_baseline_run(out, run)
    return GepaOutcome(
        run=run,
        best_instructions=best,
        best_score=result.val_aggregate_scores[result.best_idx],
        seed_score=result.val_aggregate_scores[0],
        candidates=len(result.candidates),
        reflection_error=error,
    )


def recorded_config(config: GepaConfig) -> dict[str, Any]:
    """The config as ``baseline.json`` records it: everything but an explicit API key."""
    data = config.model_dump(mode="json")
    data["model_options"] = {k: v for k, v in data["model_options"].items() if k != "api_key"}
    return data
