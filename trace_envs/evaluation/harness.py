"""The evaluation harness: every policy plays every task of a target ``trials`` times, each episode appended
to the policy's resumable trajectory store (``<out>/episodes/<name>.jsonl``); then the stores are read back
into outcomes, summaries, paired comparisons and route-only evaluation, written as ``<out>/results.json``.

A killed evaluation resumes: finished episodes are keys in the stores and are not played again.
With ``workers=N`` each policy's episodes are sharded by task over N processes (:mod:`trace_envs.rollout.workers`,
which all append to the policy's one store), so ``results.json`` is read back exactly as after one process;
a routed policy is played in this process (one router; through a server its concurrency is what scales).
Episodes are counted the same way for every method: one per (task, trial), errors included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from trace_envs.core.spot_checks import DEFAULT_SPOT_CHECK_SHARE
from trace_envs.llm.base import ChatModel
from trace_envs.registry.targets import target_of_domain
from trace_envs.rollout import (
    EpisodeRecord,
    TrajectoryStore,
    checked_policy_spec,
    iter_episodes,
    policy_factory,
    run_rollouts,
    task_jobs,
)

from .decoding import decoding_label, policy_sampling
from .policies import PolicyEntry, check_names
from .results import (
    BASE_ROUTE,
    BootstrapSettings,
    EvaluationResults,
    PolicyEvaluation,
    RouteEvaluation,
    StoreRef,
    TrialOutcome,
    save_results,
)
from .summary import comparisons, policy_summary, route_evaluation
from .targets import EvalTask, Target

EPISODES_DIR = "episodes"


def store_path(out: Path, entry: PolicyEntry) -> Path:
    return out / EPISODES_DIR / f"{entry.slug}.jsonl"


def evaluate(
    target: Target,
    policies: Sequence[PolicyEntry],
    out: str | Path,
    *,
    trials: int = 1,
    user_model: ChatModel | None = None,
    bootstrap: BootstrapSettings | None = None,
    concurrency: int = 8,
    max_steps: int | None = None,
    model_options: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
    on_episode: Callable[[str, EpisodeRecord], None] | None = None,
    workers: int = 1,
    spot_check_share: float = DEFAULT_SPOT_CHECK_SHARE,
) -> EvaluationResults:
    """Evaluate ``policies`` on ``target`` and write ``results.json`` into ``out`` (see the module docstring).

    ``user_model`` plays the user of a target whose user is a chat model (tau2's customer; the target's
    ``default_user()``, e.g. tau2's scripted customer, for scripted policies);
    ``sampling`` applies to every policy; an adapter without a temperature there is sampled at the temperature
    it was trained at (:mod:`.decoding`). ``on_episode(policy name, record)`` is called for every episode played in this run; ``workers > 1`` plays
    each policy but a routed one in that many processes (the user model must then come from ``make_chat_model``).
    ``spot_check_share``: the share of each env's seeds spot-checked (:mod:`trace_envs.core.spot_checks`).
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    if not policies:
        raise ValueError("no policy to evaluate: give at least one")
    check_names(list(policies))
    if target.needs_user_model and user_model is None:
        raise ValueError(f"target {target.info.name}'s tasks have a user played by a chat model: pass user_model=…")
    if workers > 1 and target.needs_user_model and getattr(user_model, "config", None) is None:
        raise ValueError(
            "workers > 1 rebuilds the simulated user in every worker from its model spec: pass --user-model SPEC, "
            "or play the target's scripted user in one process (--workers 1)"
        )
    folder = Path(out)
    settings = bootstrap or BootstrapSettings()
    jobs = task_jobs(target.tasks, trials)
    evaluations = []
    for entry in policies:
        chosen = policy_sampling(entry, sampling)
        factory, spec, route_of = _factory(entry, model_options or {}, chosen, workers)
        path = store_path(folder, entry)
        with TrajectoryStore(path) as store:
            options: dict[str, Any] = {
                "store": store, "concurrency": concurrency, "max_steps": max_steps,
                "user_model": user_model if target.needs_user_model else None,
                "on_episode": (lambda record, name=entry.name: on_episode(name, record)) if on_episode else None,
                "spot_check_share": spot_check_share,
            }  # fmt: skip
            if factory is None:  # a spec string: each worker process builds its own policy from it
                run_rollouts(jobs, spec, workers=workers, model_options=model_options, sampling=chosen, **options)
            else:
                run_rollouts(jobs, factory, policy_spec=spec, **options)
        outcomes = read_outcomes(target, trials, path, spec, folder, route_of)
        evaluations.append(
            PolicyEvaluation(
                name=entry.name,
                spec=spec,
                kind=entry.kind,
                base_model=entry.base_model,
                adapters=entry.adapters,
                rollouts_spent=entry.rollouts_spent,
                decoding=decoding_label(chosen),
                sampling=chosen or {},
                outcomes=outcomes,
                summary=policy_summary(outcomes, settings),
            )
        )
    results = EvaluationResults(
        target=target.info.model_copy(update={"user_model": user_model.spec if user_model is not None else None}),
        trials=trials,
        bootstrap=settings,
        policies=evaluations,
        comparisons=comparisons(evaluations, settings),
        routing=route_evaluations(evaluations, policies, settings),
    )
    save_results(folder, results)
    return results


def _factory(
    entry: PolicyEntry, model_options: dict[str, Any], sampling: dict[str, Any] | None, workers: int = 1
) -> tuple[Any, str, Callable[[str | None], str | None] | None]:
    """(per-episode policy factory, or None when ``workers > 1`` plays the spec in worker processes; the spec its
    records carry; and for routed policies: model spec -> route)."""
    if entry.kind == "routed":
        from .routed import RoutedModels, RoutedPolicyFactory

        assert entry.base_model is not None
        models = RoutedModels(entry.base_model, entry.adapters, entry.server_url, **model_options)
        return RoutedPolicyFactory(models, entry.spec, sampling), entry.spec, models.route_of_model
    if workers > 1:
        return None, checked_policy_spec(entry.spec, model_options), None
    factory, spec = policy_factory(entry.spec, model_options=model_options, sampling=sampling)
    return factory, spec, None


def read_outcomes(
    target: Target,
    trials: int,
    path: Path,
    spec: str,
    out: Path,
    route_of: Callable[[str | None], str | None] | None = None,
) -> list[TrialOutcome]:
    """The outcome of every (task, trial) from the store: the last finished record of its key, else its last
    failed one. A record whose task differs from the one its key stands for (a store reused for another
    target) is an error naming the fix."""
    by_key: dict[tuple[str, int, int], EpisodeRecord] = {}
    for record in iter_episodes(path):
        if record.policy != spec:
            continue
        key = (record.env_id, record.seed, record.sample)
        if key not in by_key or record.finished or not by_key[key].finished:
            by_key[key] = record
    outcomes = []
    relative = str(path.relative_to(out)) if path.is_relative_to(out) else str(path)
    for task in target.tasks:
        for trial in range(trials):
            played = by_key.get((task.env_id, task.seed, trial))
            if played is None:
                continue  # not played (a run stopped early): absent, not failed
            _check_task(played, task, path)
            outcomes.append(_outcome(task, trial, played, relative, route_of))
    return outcomes


def _check_task(record: EpisodeRecord, task: EvalTask, path: Path) -> None:
    if record.error is None and record.task_id not in (None, "", task.task_id):
        raise ValueError(
            f"{path}: the episode with seed {record.seed} played task {record.task_id!r}, not {task.task_id!r}; "
            "the store belongs to another target or data folder: evaluate into a fresh --out"
        )


def _outcome(
    task: EvalTask, trial: int, record: EpisodeRecord, store: str, route_of: Callable[[str | None], str | None] | None
) -> TrialOutcome:
    spec = target_of_domain(task.domain)
    similarity = record.components.get(spec.similarity) if spec is not None and spec.similarity else None
    return TrialOutcome(
        task_id=task.task_id,
        domain=task.domain,
        trial=trial,
        reward=record.reward,
        passed=record.success and record.error is None,
        similarity=similarity,
        route=(route_of(record.model) or BASE_ROUTE) if route_of is not None else None,
        num_steps=record.num_steps,
        error=str(record.error).splitlines()[0] if record.error is not None else None,
        store=StoreRef(path=store, env_id=record.env_id, seed=record.seed, sample=record.sample, policy=record.policy),
    )


def route_evaluations(
    evaluations: Sequence[PolicyEvaluation], entries: Sequence[PolicyEntry], settings: BootstrapSettings
) -> list[RouteEvaluation]:
    """Route-only evaluation of each routed policy whose candidates were evaluated too: each of its adapters
    alone (an ``adapter`` policy on the same base) and, when present, the base model (a ``base`` policy)."""
    from trace_envs.routing import CapabilityCard

    by_adapter = {(e.base_model, e.adapters[0]): e for e in evaluations if e.kind == "adapter"}
    found = []
    for entry, evaluation in zip(entries, evaluations, strict=True):
        if entry.kind != "routed":
            continue
        candidates: dict[str, PolicyEvaluation] = {}
        for directory in entry.adapters:
            match = by_adapter.get((entry.base_model, directory))
            if match is not None:
                candidates[CapabilityCard.from_adapter(directory).name] = match
        base = next((e for e in evaluations if e.kind == "base" and e.base_model == entry.base_model), None)
        if base is not None:
            candidates[BASE_ROUTE] = base
        if candidates:
            found.append(route_evaluation(evaluation, candidates, settings))
    return found
