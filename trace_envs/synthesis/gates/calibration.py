"""Gate 7, calibration: the base policy plays N seeds x K samples of the module; the env must be neither
too easy nor too hard for it, and its GRPO groups must carry signal.

Pass when mean success is within a band (default 0.2-0.6, the paper repository's
``calibrate_environment.py`` choice), the reward standard deviation is at least 0.05, and at least
half of the groups (the K samples of one seed) are informative (not all-equal). pass@1/4/8 are
reported. The module plays in boxes (:mod:`trace_envs.box`), through the proxy training uses; this
process runs the policy (:func:`~trace_envs.rollout.run_rollouts`, so a model policy reaches its endpoint
over the network) and imports nothing of the module. It runs after every other gate has passed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.box import BoxLimits

from .calibration_settings import CalibrationSettings
from .context import GateContext, named_gate
from .loading import registered_candidate
from .reports import Finding, GateResult

PASS_AT = (1, 4, 8)


class CalibrationStats(BaseModel):
    """What the base policy did on the module: success, reward spread, group signal, pass@k."""

    episodes: int = Field(description="Finished episodes (the statistics are over these).")
    failed_episodes: int = Field(default=0, description="Episodes that ended in an error (model or env), left out.")
    groups: int
    samples: int
    mean_success: float
    mean_reward: float
    reward_std: float
    informative_share: float = Field(description="Groups whose rewards are not all equal.")
    all_success_share: float
    all_zero_share: float
    pass_at: dict[int, float | None] = Field(description="Unbiased pass@k over groups (None when k > samples).")
    cost_usd: float = 0.0


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate of one group of ``n`` samples with ``c`` successes."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def calibration_stats(groups: Mapping[int, Sequence[tuple[float, bool]]], cost_usd: float = 0.0) -> CalibrationStats:
    """Statistics of ``seed -> [(reward, success), ...]`` (finished episodes only)."""
    filled = {seed: list(group) for seed, group in groups.items() if group}
    rewards = [reward for group in filled.values() for reward, _ in group]
    successes = [success for group in filled.values() for _, success in group]
    count = len(filled) or 1
    sizes = [len(group) for group in filled.values()]
    pass_at: dict[int, float | None] = {}
    for k in PASS_AT:
        if not filled or k > min(sizes):
            pass_at[k] = None
        else:
            values = [pass_at_k(len(g), sum(s for _, s in g), k) for g in filled.values()]
            pass_at[k] = round(statistics.fmean(values), 4)
    return CalibrationStats(
        episodes=len(rewards),
        groups=len(filled),
        samples=max(sizes, default=0),
        mean_success=round(statistics.fmean(successes), 4) if successes else 0.0,
        mean_reward=round(statistics.fmean(rewards), 4) if rewards else 0.0,
        reward_std=round(statistics.pstdev(rewards), 4) if rewards else 0.0,
        informative_share=round(sum(len({r for r, _ in g}) > 1 for g in filled.values()) / count, 4),
        all_success_share=round(sum(all(s for _, s in g) for g in filled.values()) / count, 4),
        all_zero_share=round(sum(all(r == 0.0 for r, _ in g) for g in filled.values()) / count, 4),
        pass_at=pass_at,
        cost_usd=cost_usd,
    )


def calibration_findings(stats: CalibrationStats, settings: CalibrationSettings) -> list[Finding]:
    """The bounds the statistics miss, each with what to change."""
    findings = []
    low, high = settings.success_band
    if stats.episodes == 0:
        return [
            Finding(
                rule="calibration-no-episodes",
                message=f"none of the {stats.failed_episodes} calibration episodes finished (every one ended in an error).",
                fix="Check the policy spec and that its model endpoint is reachable, then calibrate again.",
            )
        ]
    if stats.mean_success < low:
        findings.append(
            Finding(
                rule="calibration-too-hard",
                message=f"the base policy succeeds on {stats.mean_success:.0%} of episodes, below the band {low:.0%}-{high:.0%}.",
                fix="Make tasks easier for the base model (fewer distractors, shorter plans, clearer requests).",
            )
        )
    elif stats.mean_success > high:
        findings.append(
            Finding(
                rule="calibration-too-easy",
                message=f"the base policy succeeds on {stats.mean_success:.0%} of episodes, above the band {low:.0%}-{high:.0%}.",
                fix="Make tasks harder where the capability decides (more near-miss records, more cases needing the check).",
            )
        )
    if stats.reward_std < settings.min_reward_std:
        findings.append(
            Finding(
                rule="calibration-flat-reward",
                message=f"the reward standard deviation is {stats.reward_std:.3f}, below {settings.min_reward_std:g}.",
                fix="Make outcomes vary with the agent's behaviour on the capability, so GRPO has a signal.",
            )
        )
    if stats.informative_share < settings.min_informative:
        findings.append(
            Finding(
                rule="calibration-uninformative-groups",
                message=(
                    f"only {stats.informative_share:.0%} of the {stats.groups} groups have unequal rewards "
                    f"({settings.min_informative:.0%} needed); all-success {stats.all_success_share:.0%}, "
                    f"all-zero {stats.all_zero_share:.0%}."
                ),
                fix="Aim for tasks the base model solves sometimes, not always or never, on the same seed.",
            )
        )
    return findings


PolicyFactory = Callable[[Any], Any]


def calibrate(
    source: str,
    settings: CalibrationSettings,
    *,
    policy_factory: PolicyFactory | None = None,
    limits: BoxLimits | None = None,
) -> CalibrationStats:
    """Play the (already validated) module, boxed, and compute the statistics. ``policy_factory``
    (job -> Policy) replaces ``settings.policy`` for custom policies; ``settings.policy`` is then the
    spec its episodes record."""
    from trace_envs.rollout import TrajectoryStore, load_episodes, make_jobs, run_rollouts

    records: list[Any] = []
    with registered_candidate(source, boxes=max(1, settings.concurrency), limits=limits) as env_id:
        jobs = make_jobs([env_id], range(settings.seeds), samples=settings.samples)
        options: dict[str, Any] = {"concurrency": settings.concurrency, "max_steps": settings.max_steps}
        if policy_factory is not None:
            options["policy_spec"] = settings.policy
        else:
            options["model_options"] = settings.model_options or None
            options["sampling"] = settings.sampling or None
        policy = policy_factory if policy_factory is not None else settings.policy
        if settings.store is None:
            run_rollouts(jobs, policy, on_episode=records.append, **options)
        else:  # resumable: episodes already in the store are not played again, and count
            with TrajectoryStore(settings.store) as store:
                run_rollouts(jobs, policy, store=store, **options)
            wanted = {(job.seed, job.sample) for job in jobs}
            records = [
                r
                for r in load_episodes(settings.store, include_failed=True)
                if r.env_id == env_id and (r.seed, r.sample) in wanted
            ]
    groups: dict[int, list[tuple[float, bool]]] = {}
    for record in records:
        if record.error is None:
            groups.setdefault(record.seed, []).append((record.reward, record.success))
    cost = sum(r.usage.cost_usd + r.user_usage.cost_usd for r in records)
    failed = sum(r.error is not None for r in records)
    return calibration_stats(groups, cost).model_copy(update={"failed_episodes": failed})


@named_gate("calibration")
def calibration_gate(source: str, context: GateContext) -> GateResult:
    """Gate 7: the base policy's success is in the band and its groups carry a GRPO signal."""
    settings = context.calibration
    if settings is None:
        return GateResult(gate="calibration", status="skipped", details={"note": "no calibration policy given"})
    try:
        stats = calibrate(source, settings, limits=context.limits)
    except Exception as exc:  # the policy's model or endpoint failed (not the module: it passed every gate)
        error = Finding(
            rule="calibration-policy-error",
            message=f"playing the module with {settings.policy} failed: {type(exc).__name__}: {exc}",
            fix="Check the policy spec, its API key and that its endpoint is reachable, then calibrate again.",
        )
        return GateResult(gate="calibration", status="failed", findings=[error], details={"policy": settings.policy})
    findings = calibration_findings(stats, settings)
    return GateResult(
        gate="calibration",
        status="failed" if findings else "passed",
        findings=findings,
        details={"policy": settings.policy, **stats.model_dump(mode="json")},
    )
