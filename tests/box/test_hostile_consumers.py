"""Guards in use (issue 34, items 3 and 6): rollouts, evaluation and training check every reward, survive any
``info`` an env returns, and spot-check the seeds they use. The modules are the good module plus a payload that
waits for use: a verifier keyed on seeds validation never plays, a coin-flip reward, junk that pays. Each must be
stopped with one line naming the env and the seed, its episodes stored as errored, and the run must go on."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path
from random import Random
from typing import Any

import gymnasium as gym
import pytest
import typer
from typer.testing import CliRunner

from trace_envs.box import BoxLimits, BoxPool, boxed_env_class
from trace_envs.cli import build_app
from trace_envs.core.spot_checks import SpotCheckStop, chosen_seeds, spot_check
from trace_envs.rollout import TrajectoryStore, make_jobs, run_episode, run_rollouts
from trace_envs.rollout.policy import make_policy
from trace_envs.rollout.spot_checks import has_reference
from trace_envs.rollout.store import iter_episodes
from trace_envs.targets.tau2.data import load_domain_data
from trace_envs.training.bridge import trl_environment
from trace_envs.training.spot_checks import spot_checked_rows

from ..conftest import shared_dir
from .conftest import CLASS, GOOD, GOOD_MODULE

TAU2_DATA = shared_dir() / "data" / "tau2"
UNPLAYED = 700_000
"""Seeds from here on: past the validator's fixed seeds, and (but for a one-in-a-thousand draw) its drawn ones."""


def verifier_payload(condition: str) -> str:
    """The good module whose verifier pays 1.0 whenever ``condition`` holds (``self`` in scope)."""
    return GOOD + (
        f"\n\n_verify = {CLASS}.verify\n\n\ndef _hostile_verify(self):\n    verdict = _verify(self)\n"
        f"    if {condition}:\n        return verdict.model_copy(update={{'reward': 1.0, 'success': True}})\n"
        f"    return verdict\n\n\n{CLASS}.verify = _hostile_verify\n"
    )


SEED_KEYED = verifier_payload("(self.task_seed or 0) >= 60")  # past every seed validation fixes
COIN_FLIP = verifier_payload("__import__('random').Random(self.task_seed * 31 + len(self.messages)).random() < 0.5")
JUNK_PAYS = verifier_payload("True")
CUT_PAYS = GOOD + (  # pays when asked from outside a step: a rollout's cut at its step limit
    f"\n\n_step = {CLASS}.step\n_verify = {CLASS}.verify\n_STEPPING = []\n\n\n"
    "def _flagged_step(self, action):\n    _STEPPING.append(1)\n    try:\n        return _step(self, action)\n"
    "    finally:\n        _STEPPING.pop()\n\n\n"
    "def _cut_verify(self):\n    verdict = _verify(self)\n    if not _STEPPING:\n"
    "        return verdict.model_copy(update={'reward': 1.0, 'success': True})\n    return verdict\n\n\n"
    f"{CLASS}.step = _flagged_step\n{CLASS}.verify = _cut_verify\n"
)


def leaks_where_validation_does_not_play(order_id: str) -> str:
    """The good module, whose opening names ``order_id`` (a retail evaluation task's, kept reversed in its text)
    on seeds from :data:`UNPLAYED` on."""
    return GOOD + (
        f"\n\n_reset = {CLASS}.reset\n\n\ndef _leaky_reset(self, *, seed=None, options=None):\n"
        "    observation, info = _reset(self, seed=seed, options=options)\n"
        f"    if (self.task_seed or 0) >= {UNPLAYED}:\n"
        f"        observation += ' (not ' + ''.join(reversed({order_id[::-1]!r})) + ')'\n"
        f"    return observation, info\n\n\n{CLASS}.reset = _leaky_reset\n"
    )


@pytest.fixture
def evaluation_order_id(monkeypatch: pytest.MonkeyPatch) -> str:
    """An order id of a retail evaluation task, with $TRACE_ENVS_TAU2_DATA set so the leakage index is here."""
    if not TAU2_DATA.is_dir():
        pytest.skip(f"tau2 data not found at {TAU2_DATA}: put shared/ beside the checkout or set TRACE_ENVS_SHARED")
    monkeypatch.setenv("TRACE_ENVS_TAU2_DATA", str(TAU2_DATA))
    task = load_domain_data(TAU2_DATA, "retail").task("0")
    return str(next(a.arguments["order_id"] for a in task.gold_actions if "order_id" in a.arguments))


@pytest.fixture
def boxes() -> Iterator[BoxPool]:
    with BoxPool(BoxLimits(step_seconds=20)) as pool:
        yield pool


def register(source: str, env_id: str, boxes: BoxPool, clean_ids: list[str]) -> str:
    box = boxes.acquire(source, {})
    boxes.release(box, source, {})
    gym.register(id=env_id, entry_point=boxed_env_class(source, box.ready, pool=boxes), disable_env_checker=True)
    clean_ids.append(env_id)
    return env_id


@pytest.mark.parametrize(
    ("source", "seeds"),
    [(SEED_KEYED, range(100, 106)), (JUNK_PAYS, range(6)), (COIN_FLIP, range(6))],
    ids=["seed-keyed", "junk-pays", "coin-flip"],
)
def test_a_rollout_stops_an_env_that_pays_junk_and_stores_its_episodes_as_errors(
    source: str, seeds: range, boxes: BoxPool, clean_ids: list[str], tmp_path: Path
) -> None:
    env_id = register(source, "trace/hostile-payer-v0", boxes, clean_ids)
    store = TrajectoryStore(tmp_path / "episodes.jsonl")
    jobs = make_jobs([env_id], seeds)
    summary = run_rollouts(jobs, "oracle", store=store, spot_check_share=1.0, spot_check_seed=7)
    assert env_id in summary.stopped and "junk" in summary.stopped[env_id]
    assert f"{env_id} stopped by a spot check on seed " in summary.stopped[env_id]
    assert summary.episodes == len(seeds) and summary.failed >= 1 and summary.spot_checks >= 1
    stored = list(iter_episodes(store.path))
    assert len(stored) == len(seeds)
    assert any(record.error == summary.stopped[env_id] for record in stored)


def test_a_rollout_stops_an_env_whose_verdict_pays_only_a_cut_episode(
    boxes: BoxPool, clean_ids: list[str], tmp_path: Path
) -> None:
    """Every whole episode of this module is scored honestly; only a cut one (a rollout's ``max_steps``) is paid.
    The spot check's junk episode, cut short, stops it before any episode is stored as a success."""
    env_id = register(CUT_PAYS, "trace/hostile-cut-payer-v0", boxes, clean_ids)
    store = TrajectoryStore(tmp_path / "episodes.jsonl")
    summary = run_rollouts(
        make_jobs([env_id], range(3)), "noop", store=store, max_steps=1, spot_check_share=1.0, spot_check_seed=7
    )
    assert env_id in summary.stopped and "cut after" in summary.stopped[env_id], summary.stopped
    assert summary.pass_rate == 0.0 and not any(record.success for record in iter_episodes(store.path))


def test_the_good_module_passes_its_spot_checks_and_plays_on(boxes: BoxPool, clean_ids: list[str]) -> None:
    env_id = register(GOOD, "trace/hostile-control-v0", boxes, clean_ids)
    summary = run_rollouts(make_jobs([env_id], range(100, 104)), "oracle", spot_check_share=1.0, spot_check_seed=1)
    assert summary.stopped == {} and summary.spot_checks == 4 and summary.failed == 0 and summary.pass_rate == 1.0


def test_spot_checks_stop_the_hostile_env_and_let_the_others_play(boxes: BoxPool, clean_ids: list[str]) -> None:
    bad = register(JUNK_PAYS, "trace/hostile-mixed-bad-v0", boxes, clean_ids)
    good = register(GOOD, "trace/hostile-mixed-good-v0", boxes, clean_ids)
    summary = run_rollouts(make_jobs([bad, good], range(3)), "oracle", spot_check_share=0.0 + 1e-9)
    assert set(summary.stopped) == {bad} and "on seed 0" in summary.stopped[bad]
    assert summary.per_env[bad]["failed"] == 3 and summary.per_env[good]["successes"] == 3


def test_a_spot_check_stops_a_boxed_env_whose_text_leaks_evaluation_data_where_validation_does_not_play(
    evaluation_order_id: str, boxes: BoxPool, clean_ids: list[str]
) -> None:
    env_id = register(leaks_where_validation_does_not_play(evaluation_order_id), "trace/leaky-v0", boxes, clean_ids)
    played = run_rollouts(make_jobs([env_id], range(100, 102)), "oracle", spot_check_share=1.0, spot_check_seed=1)
    assert played.stopped == {} and played.pass_rate == 1.0  # seeds validation plays: nothing to see
    summary = run_rollouts(make_jobs([env_id], range(UNPLAYED, UNPLAYED + 3)), "oracle", spot_check_seed=1)
    stopped = summary.stopped[env_id]
    assert stopped.startswith(f"{env_id} stopped by a spot check on seed {UNPLAYED}: the oracle episode showed "), (
        stopped
    )
    assert "evaluation data" in stopped and "retail evaluation task 0" in stopped and summary.failed == 3
    rows = [{"environment": env_id, "seed": seed} for seed in range(UNPLAYED, UNPLAYED + 3)]
    with pytest.raises(SpotCheckStop, match=f"{env_id} stopped by a spot check on seed {UNPLAYED}"):
        spot_checked_rows(rows, {env_id: gym.make(env_id).unwrapped}, share=0.02, seed=3)


def test_the_spot_checks_option_sets_the_share_of_a_rollout(
    boxes: BoxPool, clean_ids: list[str], tmp_path: Path
) -> None:
    env_id = register(JUNK_PAYS, "trace/hostile-option-v0", boxes, clean_ids)
    app, runner = build_app(), CliRunner()
    for share, failed in (("0", False), ("1", True)):
        out = tmp_path / f"share-{share}.jsonl"
        command = ["rollout", "-e", env_id, "--seeds", "0-1", "-o", str(out), "--spot-checks", share]
        result = runner.invoke(app, command)
        errors = [record.error for record in iter_episodes(out)]
        assert any(f"{env_id} stopped by a spot check" in (error or "") for error in errors) == failed, result.output
    assert runner.invoke(app, ["rollout", "-e", env_id, "-o", str(out), "--spot-checks", "1.5"]).exit_code == 2


def test_the_spot_checks_option_reaches_evaluate_and_train(monkeypatch: pytest.MonkeyPatch) -> None:
    import trace_envs.cli.train as train_cli
    import trace_envs.evaluation.harness as harness

    seen: dict[str, Any] = {}

    def fake_evaluate(*args: Any, **options: Any) -> Any:
        seen["evaluate"] = options["spot_check_share"]
        raise ValueError("stop here")

    def fake_config(env_ids: list[str], knobs: dict[str, Any], config: Any, options: Any) -> Any:
        seen["train"] = options.overrides()["spot_check_share"]
        raise typer.Exit(0)

    monkeypatch.setattr(harness, "evaluate", fake_evaluate)
    monkeypatch.setattr(train_cli, "_train_config", fake_config)
    app, runner = build_app(), CliRunner()
    runner.invoke(app, ["evaluate", "-t", "device", "-p", "oracle", "-o", "unused", "--spot-checks", "0.25"])
    runner.invoke(app, ["train", "-e", "trace/order-cancel-v0", "--model", "m", "--out", "o", "--spot-checks", "0.5"])
    assert seen == {"evaluate": 0.25, "train": 0.5}


def test_the_spot_checked_seeds_are_each_envs_first_and_a_share_drawn_by_the_seed() -> None:
    seeds = list(range(1000))
    drawn = chosen_seeds(seeds, 0.02, Random(5))
    assert drawn[0] == 0 and 5 <= len(drawn) <= 45 and drawn == chosen_seeds(seeds, 0.02, Random(5))
    assert drawn != chosen_seeds(seeds, 0.02, Random(6)) and chosen_seeds(seeds, 0.0, Random(5)) == []


def test_training_drops_an_env_a_spot_check_stops_before_any_step(boxes: BoxPool, clean_ids: list[str]) -> None:
    bad = register(SEED_KEYED, "trace/hostile-train-bad-v0", boxes, clean_ids)
    good = register(GOOD, "trace/hostile-train-good-v0", boxes, clean_ids)
    rows = [{"environment": env_id, "seed": seed} for seed in range(100, 103) for env_id in (bad, good)]
    envs = {bad: gym.make(bad).unwrapped, good: gym.make(good).unwrapped}
    kept, failures = spot_checked_rows(rows, envs, share=0.02, seed=3)
    assert {row["environment"] for row in kept} == {good} and len(kept) == 3
    assert "on seed 100" in failures[bad].message and "junk" in failures[bad].message
    with pytest.raises(SpotCheckStop, match=f"{bad} stopped by a spot check on seed 100"):
        spot_checked_rows([row for row in rows if row["environment"] == bad], envs, share=0.02, seed=3)


def in_process_class() -> Any:
    spec = importlib.util.spec_from_file_location("hostile_consumers_good_module", GOOD_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, CLASS)


@pytest.mark.parametrize("reward", [math.inf, math.nan, 1e39, -1.0])
def test_the_bridge_scores_a_reward_out_of_range_as_zero_and_trains_on(reward: float, clean_ids: list[str]) -> None:
    """An env (here in-process, its finish overridden) whose reward is not finite or not in [0, 1]."""
    base = in_process_class()

    class Paying(base):  # type: ignore[misc, valid-type]
        def finish(self, terminated: bool) -> tuple[float, dict[str, Any]]:
            return reward, {}

    gym.register(id="trace/hostile-bridge-v0", entry_point=Paying, disable_env_checker=True)
    clean_ids.append("trace/hostile-bridge-v0")
    env = trl_environment("trace/hostile-bridge-v0")()
    env.reset(seed=0)
    assert env.get_reward() == 0.0 and "reward" in str(env._error)


def test_the_bridge_scores_an_env_that_raises_at_reset_as_zero(clean_ids: list[str]) -> None:
    base = in_process_class()

    class Failing(base):  # type: ignore[misc, valid-type]
        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            if seed == 13:
                raise RuntimeError("no box")
            return super().reset(seed=seed, options=options)

    gym.register(id="trace/hostile-bridge-reset-v0", entry_point=Failing, disable_env_checker=True)
    clean_ids.append("trace/hostile-bridge-reset-v0")
    env = trl_environment("trace/hostile-bridge-reset-v0")()
    assert env.reset(seed=13) is None and env.get_reward() == 0.0 and "no box" in str(env._error)
    assert "ended" in env.get_order_details(order_id="#W1")  # type: ignore[attr-defined]


class NamelessToolCalls(gym.Wrapper[str, str, str, str]):
    """An env whose transcript holds a tool call without a name, and (``reward``) a reward of its choice."""

    def __init__(self, env: gym.Env[str, str], reward: float | None = None):
        super().__init__(env)
        self.reward = reward

    def step(self, action: str) -> Any:
        observation, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, "messages": [*info.get("messages", []), {"role": "assistant", "tool_calls": [{"id": "x"}]}]}
        return observation, reward if self.reward is None else self.reward, terminated, truncated, info


def test_a_tool_call_without_a_name_is_recorded_not_a_crash() -> None:
    env = NamelessToolCalls(in_process_class()())
    record = run_episode(env, make_policy("oracle"), env_id="trace/x-v0", seed=0)
    assert record.error is None and record.reward == 1.0
    assert any(call.name == "" for call in record.tool_calls)


@pytest.mark.parametrize("reward", [math.inf, math.nan, 1e39, 2.0])
def test_a_rollout_stores_an_episode_with_a_bad_reward_as_an_error(reward: float) -> None:
    env = NamelessToolCalls(in_process_class()(), reward=reward)
    record = run_episode(env, make_policy("oracle"), env_id="trace/x-v0", seed=0)
    assert record.ended == "error" and "reward" in str(record.error) and record.reward == 0.0


def test_a_spot_check_of_a_target_env_is_skipped() -> None:
    class NotCapability(gym.Env[str, str]):
        pass

    assert spot_check(NotCapability(), "trace/none-v0", 0, Random(0)) is None


def test_only_envs_with_a_reference_solution_are_spot_checked() -> None:
    assert has_reference("trace/order-cancel-v0") and not has_reference("trace/tau2-retail-v0")
    assert not has_reference("trace/not-registered-v0")


def test_the_training_tracker_counts_and_logs_rollouts_whose_env_failed(clean_ids: list[str]) -> None:
    from trace_envs.training.trainer import GroupTracker

    base = in_process_class()

    class Failing(base):  # type: ignore[misc, valid-type]
        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            if seed == 13:
                raise RuntimeError("slow box")
            return super().reset(seed=seed, options=options)

    gym.register(id="trace/hostile-tracker-v0", entry_point=Failing, disable_env_checker=True)
    clean_ids.append("trace/hostile-tracker-v0")
    cls = trl_environment("trace/hostile-tracker-v0")
    envs = [cls(), cls()]
    envs[0].reset(seed=13)
    envs[1].reset(seed=2)
    logged: dict[str, float] = {}
    tracker = GroupTracker(num_generations=1, max_completion_length=64)
    completions = [[{"role": "assistant", "content": "Bye."}]] * 2
    tracker([[], []], completions, environments=envs, log_metric=logged.__setitem__)
    assert tracker.env_errors == 1 and logged["trace/env_error_frac"] == 0.5
