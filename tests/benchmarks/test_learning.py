"""The learning benchmark's plumbing on the tiny model for one short round: every stage runs, the result has
intervals, the paired tests, the curve, rollouts and CPU time, and a rerun resumes without redoing a stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.scripts import load_benchmark


def test_micro_batch_splits_a_step_and_must_divide_it(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("trl")
    learning = load_benchmark("learning")
    config = learning.train_config(
        learning.parse_args(["--out", "x", "--k", "8", "--groups", "2", "--micro-batch", "2"])
    )
    assert (config.per_device_train_batch_size, config.gradient_accumulation_steps) == (2, 8)
    assert learning.train_config(learning.parse_args(["--out", "x", "--k", "8"])).per_device_train_batch_size == 8
    with pytest.raises(SystemExit) as refused:
        learning.parse_args(["--out", "x", "--k", "8", "--micro-batch", "3"])
    assert refused.value.code == 2 and "--micro-batch 3 must divide the 8 rollouts of a step" in capsys.readouterr().err


@pytest.mark.train
@pytest.mark.slow
def test_one_short_round_on_the_tiny_model(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("matplotlib")
    learning = load_benchmark("learning")
    args = ["--model", "tiny", "--out", str(tmp_path), "--warmup-episodes", "6", "--warmup-epochs", "1"]
    args += ["--held-out", "3", "--other-held-out", "2", "--steps", "1", "--k", "2", "--max-completion", "32"]
    args += ["--max-tokens", "16"]
    result = learning.main(args)
    stages = result["stages"]
    assert list(stages) == [
        "make_model",
        "warm_up",
        "base_eval",
        "grpo",
        "adapter_eval",
        "other_base_eval",
        "other_adapter_eval",
    ]
    assert all(stage["cpu_s"] >= 0 for stage in stages.values())
    assert len(stages["base_eval"]["success"]) == len(stages["adapter_eval"]["success"]) == 3
    assert stages["grpo"]["steps_done"] == 1 and stages["grpo"]["rollouts"] >= 2
    assert [e["step"] for e in stages["grpo"]["curve"]] == [1]
    held_out = result["comparisons"]["held_out"]
    assert held_out["n"] == 3 and {"value", "interval"} <= set(held_out["adapter"])
    assert 0.0 <= held_out["sign_test_p"] <= 1.0 and 0.0 <= held_out["permutation_p"] <= 1.0
    assert result["comparisons"]["other_env"]["n"] == 2
    assert json.loads((tmp_path / "result.json").read_text(encoding="utf-8")) == result
    assert (tmp_path / "learning.png").stat().st_size > 0
    again = learning.main(args)  # every stage is there: nothing runs again
    assert again["stages"] == stages
