"""A killed evaluation resumes without replaying finished episodes; ``trace-envs evaluate`` on scripted policies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.evaluation import load_results
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import parse_policy
from trace_envs.evaluation.targets import load_target

SCRIPT = """
import sys, time
from trace_envs.rollout.scripted import OraclePolicy
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import parse_policy
from trace_envs.evaluation.targets import load_target

act = OraclePolicy.act
def slow(self, observation, info):
    time.sleep(0.02)  # a model that takes 20 ms per answer
    return act(self, observation, info)
OraclePolicy.act = slow
evaluate(load_target("device", limit=20), [parse_policy("oracle")], sys.argv[1], trials=2, concurrency=2)
"""


def test_killed_evaluation_resumes_without_replaying(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    store = out / "episodes" / "oracle.jsonl"
    script = tmp_path / "evaluate.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen([sys.executable, str(script), str(out)], env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if store.exists() and store.read_bytes().count(b"\n") >= 8:
                break
            assert process.poll() is None, f"the evaluation ended early with {process.returncode}"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    done_before = store.read_bytes().count(b"\n")
    assert 8 <= done_before < 40 and not (out / "results.json").exists()

    played: list[str] = []
    results = evaluate(
        load_target("device", limit=20),
        [parse_policy("oracle")],
        out,
        trials=2,
        on_episode=lambda n, r: played.append(n),
    )
    assert len(played) == 40 - done_before  # only the missing episodes were played
    keys = [(r["seed"], r["sample"]) for r in map(json.loads, store.read_bytes().splitlines())]
    assert len(keys) == len(set(keys)) == 40
    summary = results.policy("oracle").summary
    assert summary.episodes == 40 and summary.overall.pass_rate.value == 1.0


def test_evaluate_command_on_scripted_policies(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["evaluate", "--target", "device", "--tasks", "4", "-k", "2", "-p", "gold=oracle", "-p", "flawed", "-o"]
    result = runner.invoke(build_app(), [*args, str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "gold" in result.output and "flawed" in result.output and "results.json" in result.output
    results = load_results(tmp_path)
    assert [p.name for p in results.policies] == ["gold", "flawed"] and results.trials == 2
    assert results.policy("gold").summary.overall.pass_rate.value == 1.0
    assert results.comparisons[0].losses == 4

    again = runner.invoke(build_app(), [*args, str(tmp_path)])  # a rerun resumes: nothing is played again
    assert again.exit_code == 0 and load_results(tmp_path) == results

    bad = runner.invoke(build_app(), ["evaluate", "-t", "nowhere", "-p", "oracle", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown target 'nowhere'" in bad.output
    bad = runner.invoke(build_app(), ["evaluate", "-t", "device", "-p", "orcale", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown policy spec 'orcale'" in bad.output and "Traceback" not in bad.output


def test_a_device_episode_cut_by_max_steps_keeps_its_similarity_at_the_cut(tmp_path: Path) -> None:
    """ToolSandbox scores a cut-off episode by its similarity at the cut; with no verdict, one cut episode
    used to blank the policy's mean similarity and perfect count for every task."""
    target = load_target("device", None, None, 12)
    results = evaluate(target, [parse_policy("oracle")], tmp_path, max_steps=5)
    outcomes = results.policy("oracle").outcomes
    cut = [o for o in outcomes if o.num_steps == 5 and not o.passed]
    assert cut and all(o.similarity is not None and 0.0 <= o.similarity < 1.0 for o in cut)
    overall = results.policy("oracle").summary.overall
    assert overall.mean_similarity is not None and overall.perfect_count is not None
    assert overall.mean_similarity.value < 1.0


def test_an_unreachable_policy_is_named_with_its_cause_and_exits_1(tmp_path: Path) -> None:
    """Its episodes count in no metric: without the line the run looked like an empty row and exit 0."""
    from tests.conftest import free_port

    pytest.importorskip("openai")
    spec = f"openai:http://127.0.0.1:{free_port()}/v1#m"
    args = ["evaluate", "-t", "device", "--tasks", "2", "-p", "gold=oracle", "-p", f"m={spec}", "-o", str(tmp_path)]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "error: policy 'm': 2 of 2 episodes failed to run, 2 with: ConnectionRefused:" in text
    assert "policy 'gold'" not in text and "rerun the same command" in text
    assert load_results(tmp_path).policy("m").summary.errors == 2


def test_a_missing_local_model_folder_is_bad_input_not_a_stopped_evaluation(tmp_path: Path) -> None:
    """It used to load weights mid-run and say "evaluation stopped … rerun to resume" with a hub repo-id error."""
    args = ["evaluate", "-t", "device", "--tasks", "1", "-p", "hf:./nope", "-o", str(tmp_path / "e")]
    result = CliRunner().invoke(build_app(), args)
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 2 and "no model directory './nope'" in text
    assert "Repo id" not in text and "rerun to resume" not in text and not (tmp_path / "e").exists()


def test_a_store_of_another_target_is_refused(tmp_path: Path) -> None:
    """A record whose task differs from the one its key stands for (e.g. another scenario file) names the fix."""
    target = load_target("device", limit=2)
    evaluate(target, [parse_policy("oracle")], tmp_path)
    store = tmp_path / "episodes" / "oracle.jsonl"
    lines = [json.loads(line) for line in store.read_bytes().splitlines()]
    lines[0]["task_id"] = "some_other_scenario"
    store.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(ValueError, match="belongs to another target or data folder: evaluate into a fresh --out"):
        evaluate(target, [parse_policy("oracle")], tmp_path)
