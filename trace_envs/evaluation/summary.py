"""From trial outcomes to the numbers: per-task scores, per-domain and overall summaries (pass rate, pass^k,
device similarity and perfect rate, with intervals), paired comparisons and route-only evaluation.

Tasks are the unit everywhere: a task's score is the fraction of its trials passed, intervals resample
tasks, paired tests pair tasks. Trials that ended in an error are left out (tau2 drops infrastructure
errors the same way) and counted in ``errors``.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import stats
from .results import (
    BASE_ROUTE,
    OVERALL,
    BootstrapSettings,
    DomainSummary,
    Estimate,
    PairedComparison,
    PolicyEvaluation,
    PolicySummary,
    RouteEvaluation,
    RouteTask,
    TaskScore,
    TrialOutcome,
)


def task_scores(outcomes: Sequence[TrialOutcome]) -> list[TaskScore]:
    """Each task's finished trials aggregated, in first-seen order."""
    grouped: dict[tuple[str, str], list[TrialOutcome]] = {}
    for outcome in outcomes:
        if outcome.error is None:
            grouped.setdefault((outcome.domain, outcome.task_id), []).append(outcome)
    scores = []
    for (domain, task_id), trials in grouped.items():
        similarities = [t.similarity for t in trials if t.similarity is not None]
        scores.append(
            TaskScore(
                task_id=task_id,
                domain=domain,
                trials=len(trials),
                successes=sum(t.passed for t in trials),
                mean_reward=stats.mean([t.reward for t in trials]),
                mean_similarity=stats.mean(similarities) if similarities else None,
                route=trials[0].route,
            )
        )
    return scores


def domain_summary(domain: str, scores: Sequence[TaskScore], settings: BootstrapSettings) -> DomainSummary:
    """Metrics over ``scores`` (one domain's tasks, or the union for ``overall``)."""

    def estimate(values: list[float], salt: int) -> Estimate:
        return stats.estimate(
            values, resamples=settings.resamples, level=settings.confidence, seed=settings.seed + salt
        )

    trials = min((s.trials for s in scores), default=0)
    similarity = [s.mean_similarity for s in scores if s.mean_similarity is not None]
    device = len(similarity) == len(scores) and bool(scores)
    return DomainSummary(
        domain=domain,
        tasks=len(scores),
        trials_per_task=trials,
        pass_rate=estimate([s.pass_rate for s in scores], 0),
        mean_reward=estimate([s.mean_reward for s in scores], 1),
        pass_hat_k={k: stats.pass_hat_k([(s.trials, s.successes) for s in scores], k) for k in range(1, trials + 1)},
        mean_similarity=estimate(similarity, 2) if device else None,
        perfect_rate=estimate([s.pass_rate for s in scores], 3) if device else None,
        perfect_count=sum(s.successes == s.trials for s in scores) if device else None,
    )


def policy_summary(outcomes: Sequence[TrialOutcome], settings: BootstrapSettings) -> PolicySummary:
    """Per-domain summaries and the overall one (the union of the domains' tasks, the paper's Appendix C)."""
    scores = task_scores(outcomes)
    domains = list(dict.fromkeys(s.domain for s in scores))
    return PolicySummary(
        domains={d: domain_summary(d, [s for s in scores if s.domain == d], settings) for d in domains},
        overall=domain_summary(OVERALL, scores, settings),
        episodes=sum(o.error is None for o in outcomes),
        errors=sum(o.error is not None for o in outcomes),
    )


def compare(
    baseline: PolicyEvaluation, candidate: PolicyEvaluation, domain: str, settings: BootstrapSettings
) -> PairedComparison:
    """Candidate against baseline on the tasks (of ``domain``, or all for ``overall``) both have scores for."""
    ours = {(s.domain, s.task_id): s for s in task_scores(candidate.outcomes) if domain in (OVERALL, s.domain)}
    theirs = {(s.domain, s.task_id): s for s in task_scores(baseline.outcomes) if domain in (OVERALL, s.domain)}
    shared = [key for key in ours if key in theirs]
    passes = [ours[k].pass_rate - theirs[k].pass_rate for k in shared]
    rewards = [ours[k].mean_reward - theirs[k].mean_reward for k in shared]
    wins, losses = sum(d > 0 for d in passes), sum(d < 0 for d in passes)
    return PairedComparison(
        baseline=baseline.name,
        candidate=candidate.name,
        domain=domain,
        tasks=len(shared),
        wins=wins,
        losses=losses,
        ties=len(shared) - wins - losses,
        pass_rate_difference=stats.mean(passes),
        p_value=stats.sign_test(wins, losses),
        reward_difference=stats.estimate(
            rewards, resamples=settings.resamples, level=settings.confidence, seed=settings.seed
        ),
        reward_p_value=stats.permutation_test(rewards, resamples=settings.resamples, seed=settings.seed),
    )


def comparisons(policies: Sequence[PolicyEvaluation], settings: BootstrapSettings) -> list[PairedComparison]:
    """Every later policy against the first (the baseline), per domain and overall."""
    if len(policies) < 2:
        return []
    baseline = policies[0]
    domains = [*baseline.summary.domains, OVERALL] if len(baseline.summary.domains) > 1 else [*baseline.summary.domains]
    return [compare(baseline, candidate, d, settings) for candidate in policies[1:] for d in domains]


def route_evaluation(
    routed: PolicyEvaluation, candidates: dict[str, PolicyEvaluation], settings: BootstrapSettings
) -> RouteEvaluation:
    """Router accuracy and union ceiling of ``routed``, against the candidates' evaluations (capability ->
    its adapter's evaluation; :data:`BASE_ROUTE` -> the base model's). A task counts as solved by a
    candidate when the candidate passed every trial of it; accuracy is over the tasks some candidate solves."""
    solved = {
        route: {(s.domain, s.task_id) for s in task_scores(e.outcomes) if s.trials and s.successes == s.trials}
        for route, e in candidates.items()
    }
    scores = task_scores(routed.outcomes)
    tasks = []
    for score in scores:
        key = (score.domain, score.task_id)
        solvers = [route for route in candidates if key in solved[route]]
        chosen = score.route or BASE_ROUTE
        tasks.append(
            RouteTask(
                task_id=score.task_id, domain=score.domain, chosen=chosen, solvers=solvers, correct=chosen in solvers
            )
        )
    solvable = [t for t in tasks if t.solvers]

    def estimate(values: list[float]) -> Estimate:
        return stats.estimate(values, resamples=settings.resamples, level=settings.confidence, seed=settings.seed)

    return RouteEvaluation(
        routed=routed.name,
        candidates={route: e.name for route, e in candidates.items()},
        tasks=tasks,
        solvable=len(solvable),
        accuracy=estimate([float(t.correct) for t in solvable]) if solvable else None,
        union_ceiling=estimate([float(bool(t.solvers)) for t in tasks]),
        routed_pass_rate=stats.mean([s.pass_rate for s in scores]),
    )
