"""The statistics of an evaluation, in plain Python with a seeded local RNG (same inputs, same numbers):
tau2's pass^k, percentile bootstrap intervals, and the paired tests between two policies.

- :func:`bootstrap_interval`: resample the per-task values with replacement ``resamples`` times; the
  interval is the (1-level)/2 and (1+level)/2 percentiles of the resampled means (linear interpolation
  between order statistics, numpy's default).
- :func:`sign_test`: exact two-sided binomial test of wins against losses (ties dropped); with 0/1
  per-task outcomes it is the exact McNemar test.
- :func:`permutation_test`: two-sided paired sign-flip test of the mean difference; exact (every sign
  pattern) up to :data:`EXACT_PERMUTATION_MAX` pairs, else ``resamples`` seeded random patterns.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

from .results import Estimate, Interval

EXACT_PERMUTATION_MAX = 16
"""Up to this many pairs the permutation test enumerates all 2^n sign patterns (65,536)."""
_TOLERANCE = 1e-12


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean (0.0 for no values)."""
    return sum(values) / len(values) if values else 0.0


def pass_hat_k(trials: Sequence[tuple[int, int]], k: int) -> float:
    """tau2's pass^k: the mean over tasks of C(c, k) / C(n, k), for (n trials, c successes) per task."""
    if k < 1:
        raise ValueError(f"pass^k needs k >= 1, got {k}")
    if not trials:
        return 0.0
    short = [n for n, _ in trials if n < k]
    if short:
        raise ValueError(f"pass^{k} needs at least {k} trials per task; a task has only {min(short)}")
    return mean([math.comb(c, k) / math.comb(n, k) for n, c in trials])


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, interpolating linearly between order statistics."""
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def bootstrap_interval(values: Sequence[float], *, resamples: int, level: float, seed: int) -> Interval | None:
    """Percentile bootstrap interval of the mean of ``values`` (None for fewer than two values)."""
    n = len(values)
    if n < 2:
        return None
    rng = random.Random(seed)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1.0 - level) / 2
    return Interval(low=percentile(means, tail), high=percentile(means, 1.0 - tail), level=level)


def estimate(values: Sequence[float], *, resamples: int, level: float, seed: int) -> Estimate:
    """The mean of ``values`` with its bootstrap interval."""
    return Estimate(
        value=mean(values), interval=bootstrap_interval(values, resamples=resamples, level=level, seed=seed)
    )


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test p-value of ``wins`` against ``losses`` (1.0 when there are none)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def permutation_test(differences: Sequence[float], *, resamples: int, seed: int) -> float:
    """Two-sided paired sign-flip p-value of the mean of ``differences`` (1.0 for none)."""
    n = len(differences)
    if n == 0:
        return 1.0
    observed = abs(mean(differences)) - _TOLERANCE
    if n <= EXACT_PERMUTATION_MAX:
        patterns = list(itertools.product((1, -1), repeat=n))
        extreme = sum(
            abs(mean([s * d for s, d in zip(signs, differences, strict=True)])) >= observed for signs in patterns
        )
        return extreme / len(patterns)
    rng = random.Random(seed)
    extreme = sum(
        abs(mean([d if rng.random() < 0.5 else -d for d in differences])) >= observed for _ in range(resamples)
    )
    return (extreme + 1) / (resamples + 1)
