"""Gate 7, calibration: the statistics, the bounds, and playing a validated module with run_rollouts."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from trace_envs.rollout import make_policy
from trace_envs.synthesis import CalibrationSettings, calibration_stats, validate_file
from trace_envs.synthesis.gates.calibration import calibrate, calibration_findings, calibration_gate, pass_at_k

from .conftest import GOOD_MODULE, make_context

SOURCE = GOOD_MODULE.read_text(encoding="utf-8")


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    """Share of the k-subsets of n samples (c of them successes) holding a success."""
    subsets = list(itertools.combinations([True] * c + [False] * (n - c), k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(8, 0, 1), (8, 1, 1), (8, 3, 4), (8, 5, 4), (8, 2, 8), (4, 1, 4)])
def test_pass_at_k_is_the_unbiased_estimate(n: int, c: int, k: int) -> None:
    assert math.isclose(pass_at_k(n, c, k), brute_pass_at_k(n, c, k))


def test_statistics_of_groups() -> None:
    groups = {
        0: [(1.0, True), (0.0, False), (0.0, False), (0.0, False)],  # informative
        1: [(1.0, True)] * 4,  # all success
        2: [(0.0, False)] * 4,  # all zero
        3: [(0.5, False), (0.0, False), (1.0, True), (1.0, True)],  # informative
    }
    stats = calibration_stats(groups, cost_usd=0.25)
    assert stats.episodes == 16 and stats.groups == 4 and stats.samples == 4
    assert stats.mean_success == round(7 / 16, 4)
    assert stats.informative_share == 0.5 and stats.all_success_share == 0.25 and stats.all_zero_share == 0.25
    rewards = [r for g in groups.values() for r, _ in g]
    mean = sum(rewards) / len(rewards)
    assert math.isclose(stats.reward_std, math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards)), abs_tol=1e-4)
    assert stats.pass_at[1] == round((0.25 + 1 + 0 + 0.5) / 4, 4)
    assert stats.pass_at[4] == 0.75 and stats.pass_at[8] is None  # 8 > 4 samples
    assert stats.cost_usd == 0.25
    assert calibration_findings(stats, CalibrationSettings(policy="p")) == []


@pytest.mark.parametrize(
    ("groups", "rules"),
    [
        ({0: [(1.0, True)] * 4, 1: [(1.0, True)] * 4}, {"calibration-too-easy", "calibration-flat-reward", "calibration-uninformative-groups"}),
        ({0: [(0.0, False)] * 4, 1: [(0.0, False)] * 4}, {"calibration-too-hard", "calibration-flat-reward", "calibration-uninformative-groups"}),
        ({0: [(1.0, True)] * 4, 1: [(0.0, False)] * 4}, {"calibration-uninformative-groups"}),
        ({}, {"calibration-no-episodes"}),
    ],
)  # fmt: skip
def test_each_bound_names_its_rule(groups: dict[int, list[tuple[float, bool]]], rules: set[str]) -> None:
    findings = calibration_findings(calibration_stats(groups), CalibrationSettings(policy="p"))
    assert {f.rule for f in findings} == rules
    assert all(f.fix for f in findings)


def test_settings_refuse_a_band_upside_down() -> None:
    with pytest.raises(ValueError, match="success_band"):
        CalibrationSettings(policy="p", success_band=(0.6, 0.2))


def half_oracle(job: Any) -> Any:
    """A policy that solves every other sample of each seed: every group informative, success 0.5."""
    return make_policy("oracle" if (job.seed + job.sample) % 2 else "noop")


def test_a_mixed_policy_calibrates_and_the_candidate_is_unregistered_after(tmp_path: Path) -> None:
    settings = CalibrationSettings(policy="half-oracle", seeds=4, samples=4, store=tmp_path / "calibration.jsonl")
    stats = calibrate(SOURCE, settings, policy_factory=half_oracle)
    assert stats.episodes == 16 and stats.failed_episodes == 0
    assert stats.mean_success == 0.5 and stats.informative_share == 1.0 and stats.reward_std == 0.5
    assert stats.pass_at[1] == 0.5 and stats.pass_at[4] == 1.0
    assert calibration_findings(stats, settings) == []
    assert not [env_id for env_id in gym.registry if env_id.startswith("trace/candidate-")]
    # resumed from its store: nothing is played again, and the statistics are the same
    again = calibrate(SOURCE, settings, policy_factory=lambda job: pytest.fail("played again"))
    assert again == stats


def test_the_gate_with_a_scripted_policy_finds_the_env_too_easy() -> None:
    context = make_context(calibration=CalibrationSettings(policy="oracle", seeds=3, samples=2))
    result = calibration_gate(SOURCE, context)
    assert result.status == "failed"
    assert {f.rule for f in result.findings} >= {"calibration-too-easy", "calibration-uninformative-groups"}
    assert result.details["mean_success"] == 1.0 and result.details["policy"] == "oracle"


def test_a_policy_that_cannot_be_built_is_a_finding_not_a_crash() -> None:
    context = make_context(calibration=CalibrationSettings(policy="flawed:", seeds=1, samples=1))
    result = calibration_gate(SOURCE, context)
    assert result.status == "failed" and result.findings[0].rule == "calibration-policy-error"
    assert "flawed:" in result.findings[0].message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")
def test_calibration_runs_last_after_every_other_gate(tau2_data: Path) -> None:
    context = make_context(calibration=CalibrationSettings(policy="noop", seeds=2, samples=2))
    report = validate_file(GOOD_MODULE, context)
    assert [r.gate for r in report.results][-2:] == ["capability", "calibration"]
    assert report.stopped_by == "calibration", report.table()
    assert all(r.passed for r in report.results[:-1])
    assert "calibration-too-hard" in {f.rule for f in report.result("calibration").findings}
