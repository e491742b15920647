"""``evaluate --workers 2``: each policy's episodes shared out over 2 processes, merged into one results.json with
the same numbers as one process (and a rerun of either resumes: nothing is played twice)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.evaluation import load_results
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import parse_policy
from trace_envs.evaluation.targets import load_target
from trace_envs.rollout import load_episodes

POLICIES = ["oracle", "flawed", "noop"]


def test_two_processes_write_the_results_of_one(tmp_path: Path) -> None:
    target = load_target("device", limit=6)
    one = evaluate(target, [parse_policy(p) for p in POLICIES], tmp_path / "one", trials=2)
    args = ["evaluate", "--target", "device", "--tasks", "6", "--trials", "2", "--workers", "2"]
    args += [option for p in POLICIES for option in ("--policy", p)]
    result = CliRunner().invoke(build_app(), [*args, "--out", str(tmp_path / "two")])
    assert result.exit_code == 0, result.output
    two = load_results(tmp_path / "two")
    assert two.model_dump(mode="json") == one.model_dump(mode="json")  # outcomes, summaries, paired tests
    assert [len(p.outcomes) for p in two.policies] == [12, 12, 12]
    rewards = [two.policy(p).summary.overall.mean_reward.value for p in POLICIES]
    assert rewards[0] > rewards[1] > rewards[2]  # oracle, then flawed, then noop: the numbers are not all equal
    store = tmp_path / "two" / "episodes" / "oracle.jsonl"
    assert len(load_episodes(store)) == 12  # both workers appended to the one store, each episode once
    again = CliRunner().invoke(build_app(), [*args, "--out", str(tmp_path / "two")])
    assert again.exit_code == 0, again.output
    assert len(load_episodes(store)) == 12 and load_results(tmp_path / "two") == two


def test_workers_refuse_the_scripted_tau2_customer(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau2"
    if not data.is_dir():
        pytest.skip(f"no tau2 data at {data}")
    args = ["evaluate", "--target", "tau2-airline", "--data", str(data), "--tasks", "1", "--policy", "oracle"]
    result = CliRunner().invoke(build_app(), [*args, "--workers", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--workers 1" in " ".join(result.output.split()), result.output
