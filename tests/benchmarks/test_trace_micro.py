"""The micro-scale TRACE benchmark: its arguments are checked when parsed, the baseline's budget is what the
pipeline's finished adapters collected, and one short round on the tiny model runs every stage (the pipeline's
rollout played by the scripted flawed agent, so analysis finds the planted deficits and every later stage has
work), reports consistent counts, and resumes without redoing a stage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.benchmarks.scripts import BENCHMARKS, load_benchmark

SCRIPT = BENCHMARKS / "trace_micro.py"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--k", "4", "--micro-batch", "3"], "--micro-batch 3 must divide the 4 rollouts of a step"),
        (["--k", "1"], "--k must be at least 2"),
        (["--eval-tasks", "99"], "--eval-tasks 99: the device test split has"),
        (["--rollout-tasks", "0"], "--rollout-tasks must be at least 1, got 0"),
        (["--samples", "0"], "--samples must be at least 1, got 0"),
        (["--temperature", "0"], "--temperature must be above 0"),
        (["--base", "no-such-folder"], "--base no-such-folder: no config.json there"),
    ],
)
def test_bad_arguments_are_refused_when_parsed(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    micro = load_benchmark("trace_micro")
    with pytest.raises(SystemExit) as refused:
        micro.parse_args(["--out", "x", *extra])
    assert refused.value.code == 2 and message in capsys.readouterr().err


def test_the_pipeline_config_rolls_out_the_warm_model_on_the_train_split(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from trace_envs.pipeline.model_stages import section_train_config

    micro = load_benchmark("trace_micro")
    args = micro.parse_args(["--out", "x", "--rollout-tasks", "5", "--k", "4", "--micro-batch", "2", "--steps", "3"])
    config = micro.pipeline_config(args, tmp_path / "warm")
    assert config.targets == ["device"]
    assert (config.rollout.policy, config.rollout.split, config.rollout.max_tasks) == (
        f"hf:{tmp_path / 'warm'}",
        "train",
        5,
    )
    assert (config.rollout.max_steps, config.rollout.max_tokens) == (args.max_turns, args.max_tokens)
    assert (config.analyze.analyst, config.synthesize.generator) == ("probes", "catalogue")
    train = section_train_config(config, micro.ENV_ID)
    assert (train.max_steps, train.num_generations, train.groups_per_step) == (3, 4, 1)
    assert (train.per_device_train_batch_size, train.gradient_accumulation_steps) == (2, 2)
    assert train.gradient_checkpointing and train.temperature == args.temperature == 1.0
    assert config.rollout.concurrency == args.concurrency
    scripted = micro.parse_args(["--out", "x", "--rollout-policy", micro.WARMUP_POLICY])
    assert micro.pipeline_config(scripted, tmp_path).rollout.policy == micro.WARMUP_POLICY


def _adapter(folder: Path, status: Literal["training", "complete"], rollouts: int) -> None:
    from trace_envs.training import AdapterMetadata, save_metadata

    meta = AdapterMetadata(
        capability=folder.name, description="", env_ids=["trace/x-v0"], base_model="m", config={}, status=status
    )
    meta.rollouts_collected = rollouts
    save_metadata(folder, meta)


def test_the_baseline_budget_is_what_the_finished_adapters_collected(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    micro = load_benchmark("trace_micro")
    train = tmp_path / "pipeline" / "train"
    _adapter(train / "device" / "datetime_reasoning", "complete", 12)
    _adapter(train / "device" / "permission_error_recovery", "complete", 8)
    _adapter(train / "device" / "unfinished", "training", 4)  # a killed run's adapter is not spent budget yet
    _adapter(train / "retail" / "other", "complete", 100)  # another target's
    assert micro.train_rollouts(train) == {"device/datetime_reasoning": 12, "device/permission_error_recovery": 8}
    assert micro.spent(tmp_path)["total"] == 20


def test_no_adapter_means_no_baseline_step(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    micro = load_benchmark("trace_micro")
    config = micro.pipeline_config(micro.parse_args(["--out", "x", "--k", "2"]), tmp_path / "warm")
    skipped = micro.baseline(config, tmp_path / "warm", tmp_path)
    assert skipped["budget"] == 0 and "less than one GRPO step" in skipped["skipped"]


def run_script(args: list[str]) -> dict[str, Any]:
    """The benchmark as a user runs it, in its own process (its pipeline registers the envs it synthesises, which
    must not leak into the registry the other tests enumerate); its ``result.json``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(SCRIPT.parents[1])}
    done = subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    out = Path(args[args.index("--out") + 1])
    result: dict[str, Any] = json.loads((out / "result.json").read_text(encoding="utf-8"))
    return result


@pytest.mark.train
@pytest.mark.slow
def test_one_short_round_on_the_tiny_model(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("matplotlib")
    micro = load_benchmark("trace_micro")
    # no warm-up: an SFT step over the device's long episodes is most of a round's time (learning.py's round
    # covers the warm-up); the tiny base is the agent, and the scripted rollout gives the analysis its deficits
    args = ["--model", "tiny", "--out", str(tmp_path), "--warmup-steps", "0"]
    args += ["--rollout-policy", micro.WARMUP_POLICY, "--rollout-tasks", "6"]
    args += ["--eval-tasks", "2", "--steps", "1", "--k", "2", "--max-completion", "32", "--max-tokens", "16"]
    args += ["--max-turns", "3", "--samples", "2", "--concurrency", "2"]
    result = run_script(args)
    stages = result["stages"]
    assert list(stages) == [
        "make_model",
        "warm_up",
        *(f"pipeline_{name}" for name in micro.PIPELINE_STAGES),
        "train_rollouts",
        "grpo_target",
        "evaluate",
    ]
    assert all(stage["cpu_s"] >= 0 and stage["wall_s"] >= 0 for stage in stages.values())
    assert stages["warm_up"]["folder"] == str(tmp_path / "base") and "skipped" in stages["warm_up"]
    assert not (tmp_path / "warm").exists(), "the pipeline trained the base itself"
    report = result["report"]
    assert report["warm_rollout"]["episodes"] == 6 and report["found_the_planted"] is True
    assert sorted(report["synthesized"]) == sorted(micro.PLANTED)
    adapters = stages["train_rollouts"]["adapters"]
    assert len(adapters) == 2 and report["rollouts"]["train"] == sum(adapters.values()) >= 2 * 2
    assert report["rollouts"]["grpo_target"]["budget"] == report["rollouts"]["train"]
    assert report["rollouts"]["grpo_target"]["rollouts_used"] == report["rollouts"]["train"]
    assert sum(report["router_choices"]["routes"].values()) == 6
    evaluation = stages["evaluate"]
    assert evaluation["split"] == "test" and len(evaluation["tasks"]) == 2
    assert {name: p["tasks"] for name, p in report["policies"].items()} == {n: 2 for n in micro.POLICIES}
    assert report["samples_per_task"] == 2 and evaluation["samples"] == 2
    for name, policy in evaluation["policies"].items():  # the policy as GRPO trained it: sampled, 2 trials a task
        assert policy["decoding"] == "sampled (temperature 1)" and policy["errors"] == 0, name
        assert all(value in (0.0, 0.5, 1.0) for value in policy["success"]), name
        assert 0.0 <= policy["tool_call_rate"] <= 1.0, name
    assert report["warm_tool_call_rate_on_test"] == evaluation["policies"]["base"]["tool_call_rate"]
    assert sum(report["router_choices_on_test"].values()) == 2
    for against in ("base", "grpo-target"):
        paired = report[f"routed_vs_{against}"]
        assert paired["n"] == 2 and 0.0 <= paired["sign_test_p"] <= 1.0 and 0.0 <= paired["permutation_p"] <= 1.0
    assert (tmp_path / "trace_micro.png").stat().st_size > 0
    again = run_script(args)  # every stage is there: nothing runs again
    assert again["stages"] == stages
