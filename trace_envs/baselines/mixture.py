"""A deterministic mixture of envs for one GRPO run: groups allocated to envs by largest remainder.

As the authors' ``GameMix.assign_groups`` does, a run's groups are not sampled at random: each env gets
``floor(total x w / sum(w))`` groups, and the groups left over go to the envs with the largest
fractional parts (ties: the env listed first). Every group is one env and one seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from trace_envs.training import prompt_for_seed, trl_environment


def check_weights(env_ids: Sequence[str], weights: Sequence[float] | None) -> list[float]:
    """The weights of ``env_ids`` (uniform when ``None``); a wrong count, a negative weight or an all-zero
    mixture is a ``ValueError`` naming the fix."""
    if not env_ids:
        raise ValueError("a mixture needs at least one env: repeat --env ENV_ID")
    if len(set(env_ids)) != len(env_ids):
        raise ValueError(f"--env names an env twice ({', '.join(env_ids)}): give each env once, with a weight")
    if weights is None:
        return [1.0] * len(env_ids)
    if len(weights) != len(env_ids):
        raise ValueError(f"--weights has {len(weights)} value(s) for {len(env_ids)} env(s): give one weight per --env")
    if any(w < 0 for w in weights) or not sum(weights) > 0:
        raise ValueError(f"--weights must be >= 0 and not all 0, got {', '.join(map(str, weights))}")
    return [float(w) for w in weights]


def allocate_groups(env_ids: Sequence[str], weights: Sequence[float], total: int) -> dict[str, int]:
    """Groups per env, in proportion to ``weights``, by largest remainder (exact arithmetic, ties to the
    env listed first); the counts sum to ``total``."""
    exact = [Fraction(w) for w in check_weights(env_ids, weights)]
    quotas = [total * w / sum(exact) for w in exact]
    counts = [int(q) for q in quotas]  # floor: quotas are >= 0
    by_remainder = sorted(range(len(env_ids)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return dict(zip(env_ids, counts, strict=True))


def group_schedule(counts: dict[str, int], first_seed: int = 0) -> list[tuple[str, int]]:
    """One ``(env_id, seed)`` per group, the envs interleaved so that every prefix of the run stays close
    to the mixture (the k-th of an env's c groups sits at (k + 1/2) / c); each env's seeds count up from
    ``first_seed``."""
    order = list(counts)
    slots = [
        (Fraction(2 * k + 1, 2 * count), order.index(env_id), env_id, first_seed + k)
        for env_id, count in counts.items()
        for k in range(count)
    ]
    return [(env_id, seed) for _, _, env_id, seed in sorted(slots)]


def mixture_rows(
    schedule: Sequence[tuple[str, int]], knobs: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """GRPO dataset rows ``{"prompt", "seed", "environment"}``, one per scheduled group."""
    knobs = knobs or {}
    classes = {
        env_id: trl_environment(env_id, **knobs.get(env_id, {})) for env_id in dict.fromkeys(e for e, _ in schedule)
    }
    return [
        {"prompt": prompt_for_seed(classes[env_id], seed), "seed": seed, "environment": env_id}
        for env_id, seed in schedule
    ]
