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
    default = learning.train_config(learning.parse_args(["--out", "x", "--k", "8", "--groups", "1"]))
    assert default.per_device_train_batch_size == 8 and default.env_knobs == {learning.ENV_ID: learning.KNOBS}
    assert default.bf16 is None  # bf16 where a GPU is, float32 on a CPU
    assert learning.train_config(learning.parse_args(["--out", "x", "--bf16"])).bf16 is True
    with pytest.raises(SystemExit) as refused:
        learning.parse_args(["--out", "x", "--k", "8", "--micro-batch", "3"])
    assert (
        refused.value.code == 2 and "--micro-batch 3 must divide the 16 rollouts of a step" in capsys.readouterr().err
    )


def test_the_shortcuts_skip_the_capability_and_none_reaches_the_check() -> None:
    """On the variant env, acting without the check fails on every seed, and the best shortcut (looking up and then
    always cancelling, or always reporting the status) stays near half: a gain must come from the check."""
    learning = load_benchmark("learning")
    scores = learning.shortcut_scores(list(range(10_000, 10_060)))
    rates = scores["rates"]
    assert rates["act at once"] == 0.0 and rates["always refuse"] == 0.0
    assert 0.3 < rates["look up, then always cancel"] < 0.7 and 0.3 < rates["always report"] < 0.7
    assert abs(rates["look up, then always cancel"] + rates["always report"] - 1.0) < 1e-9
    assert len(scores["decisive_seeds"]) == round(60 * (1 - rates[scores["best"]]))


def test_the_warm_up_reference_seeds_show_the_tools_but_no_refusal() -> None:
    import gymnasium as gym

    learning = load_benchmark("learning")
    seeds = learning.pending_seeds(6)
    env = gym.make(learning.ENV_ID, disable_env_checker=True).unwrapped
    for seed in seeds:
        env.reset(seed=seed)
        lookup, cancel, _ = env.oracle_actions()
        assert '"get_order_details"' in lookup and '"cancel_order"' in cancel
    assert len(seeds) == 6 and min(seeds) >= learning.WARMUP_REFERENCE_BASE


@pytest.mark.train
@pytest.mark.slow
def test_one_short_round_on_the_tiny_model(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("matplotlib")
    learning = load_benchmark("learning")
    args = ["--model", "tiny", "--out", str(tmp_path / "run"), "--warmup-episodes", "6", "--warmup-epochs", "1"]
    args += ["--warmup-reference", "2", "--held-out", "3", "--samples", "2", "--steps", "1", "--k", "2"]
    args += ["--groups", "1", "--max-completion", "32", "--max-tokens", "16", "--max-turns", "3"]
    args += ["--results", str(tmp_path / "results")]
    result = learning.main(args)
    stages = result["stages"]
    assert list(stages) == [
        "make_model",
        "shortcuts",
        "warm_up",
        "base_sampled",
        "base_greedy",
        "grpo",
        "adapter_sampled",
        "adapter_greedy",
    ]
    assert all(stage["cpu_s"] >= 0 and stage["wall_s"] >= 0 for stage in stages.values())
    assert stages["warm_up"]["reference_episodes"] == 2
    assert stages["base_sampled"]["trials"] == 2 and stages["base_greedy"]["trials"] == 1
    assert (
        stages["base_sampled"]["decoding"] == "sampled (temperature 1)"
        and stages["base_greedy"]["decoding"] == "greedy"
    )
    assert len(stages["base_sampled"]["success"]) == len(stages["adapter_sampled"]["success"]) == 3
    assert all(v in (0.0, 0.5, 1.0) for v in stages["adapter_sampled"]["success"])
    assert stages["grpo"]["steps_done"] == 1 and stages["grpo"]["rollouts"] >= 2
    assert len(stages["grpo"]["constant_group_share_per_step"]) >= 1
    assert result["training_seed"] == 0 and result["held_out_seeds"] == 3 and result["samples_per_seed"] == 2
    assert set(result["base"]) == {"rate", "ci95"} and len(result["difference"]["ci95"]) == 2
    assert 0.0 <= result["p"] <= 1.0 and result["commit"] and result["machine"].startswith(("CPU", "GPU"))
    assert {"sampled", "greedy"} <= set(result["comparisons"])
    saved = json.loads((tmp_path / "results" / "learning-seed0.json").read_text(encoding="utf-8"))
    assert saved == result == json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert (tmp_path / "results" / "learning-seed0.png").stat().st_size > 0
    again = learning.main(args)  # every stage is there: nothing runs again
    assert again["stages"] == stages
    first_run = args[: args.index("--results")]  # the same sizes; a later --out wins
    second = learning.main(
        [*first_run, "--seed", "1", "--out", str(tmp_path / "run1"), "--base-from", str(tmp_path / "run")]
    )
    shared = ("make_model", "warm_up", "base_sampled", "base_greedy")
    assert list(second["stages"])[:4] == ["make_model", "shortcuts", "warm_up", "grpo"]  # trains before the base
    for name in shared:  # taken from the first run, not recomputed
        assert second["stages"][name]["from"] == str(tmp_path / "run")
        taken = {k: v for k, v in second["stages"][name].items() if k not in ("from", "from_commit", "waited_s")}
        assert taken == stages[name]  # with what it cost in the first run
    assert not (tmp_path / "run1" / "warm").exists() and second["training_seed"] == 1
    assert second["stages"]["grpo"]["config"]["seed"] == 1


def test_base_from_must_be_another_run_with_the_same_base(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    learning = load_benchmark("learning")
    with pytest.raises(SystemExit) as same:
        learning.parse_args(["--out", str(tmp_path), "--base-from", str(tmp_path)])
    assert same.value.code == 2 and "--base-from must name another run's --out" in capsys.readouterr().err
    with pytest.raises(SystemExit) as missing:
        learning.parse_args(["--out", str(tmp_path / "mine"), "--base-from", str(tmp_path / "nowhere")])
    assert missing.value.code == 2 and "is not a folder: start that run first" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    settings = {**vars(learning.parse_args(["--out", str(other)])), "base_seed": 7, "out": str(other)}
    (other / "result.json").write_text(json.dumps({"settings": settings, "stages": {}}), encoding="utf-8")
    args = learning.parse_args(["--out", str(tmp_path / "mine"), "--base-from", str(other)])
    with pytest.raises(SystemExit, match="its base_seed differ"):
        learning.shared_stage(args, "warm_up", poll_s=0.0)
