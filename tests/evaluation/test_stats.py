"""The statistics against hand-computed cases: pass^k, the bootstrap interval, the sign and permutation tests."""

from __future__ import annotations

import pytest

from trace_envs.evaluation.stats import (
    bootstrap_interval,
    pass_hat_k,
    percentile,
    permutation_test,
    sign_test,
)


def test_pass_hat_k_by_hand() -> None:
    # task A: 2 of 3 trials pass: pass^1 2/3, pass^2 C(2,2)/C(3,2) = 1/3, pass^3 0; task B: 3 of 3: 1, 1, 1
    trials = [(3, 2), (3, 3)]
    assert pass_hat_k(trials, 1) == pytest.approx(5 / 6)
    assert pass_hat_k(trials, 2) == pytest.approx(2 / 3)
    assert pass_hat_k(trials, 3) == pytest.approx(1 / 2)
    with pytest.raises(ValueError, match="at least 4 trials per task"):
        pass_hat_k(trials, 4)


def test_percentile_interpolates_between_order_statistics() -> None:
    assert percentile([0.0, 1.0, 2.0, 3.0], 0.5) == 1.5
    assert percentile([0.0, 1.0, 2.0, 3.0], 0.0) == 0.0 and percentile([0.0, 1.0, 2.0, 3.0], 1.0) == 3.0


def test_bootstrap_interval_by_hand() -> None:
    """Values [0, 1]: a resample's mean is 0 (p 1/4), 0.5 (p 1/2) or 1 (p 1/4). The 95% interval spans
    [0, 1]; the 40% one (the 30th and 70th percentiles) lies inside the middle mass: [0.5, 0.5]."""
    wide = bootstrap_interval([0.0, 1.0], resamples=2000, level=0.95, seed=0)
    assert wide is not None and (wide.low, wide.high) == (0.0, 1.0)
    narrow = bootstrap_interval([0.0, 1.0], resamples=2000, level=0.4, seed=0)
    assert narrow is not None and (narrow.low, narrow.high) == (0.5, 0.5)
    constant = bootstrap_interval([0.7] * 5, resamples=100, level=0.95, seed=1)
    assert constant is not None and constant.low == pytest.approx(0.7) and constant.high == pytest.approx(0.7)
    assert bootstrap_interval([1.0], resamples=100, level=0.95, seed=0) is None
    # seeded: the same inputs give the same interval
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 0.5]
    assert bootstrap_interval(values, resamples=500, level=0.9, seed=3) == bootstrap_interval(
        values, resamples=500, level=0.9, seed=3
    )


def test_sign_test_by_hand() -> None:
    # 8 wins, 2 losses: 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 * 56 / 1024
    assert sign_test(8, 2) == pytest.approx(112 / 1024)
    assert sign_test(2, 8) == pytest.approx(112 / 1024)
    assert sign_test(3, 3) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(6, 0) == pytest.approx(2 / 64)


def test_permutation_test_by_hand() -> None:
    # [1, 1, 1]: of the 8 sign patterns only all-plus and all-minus reach |mean| 1
    assert permutation_test([1.0, 1.0, 1.0], resamples=100, seed=0) == pytest.approx(2 / 8)
    # [1, -1]: the observed mean is 0, so every pattern is at least as extreme: p = 1
    assert permutation_test([1.0, -1.0], resamples=100, seed=0) == 1.0
    # [2, 1]: |mean| >= 1.5 only for ++ and --
    assert permutation_test([2.0, 1.0], resamples=100, seed=0) == pytest.approx(2 / 4)
    assert permutation_test([], resamples=10, seed=0) == 1.0
    # beyond the exact limit: Monte Carlo, seeded, with the +1 correction; 20 equal gains are very unlikely by chance
    p = permutation_test([1.0] * 20, resamples=999, seed=0)
    assert p == permutation_test([1.0] * 20, resamples=999, seed=0) and p == pytest.approx(1 / 1000)
