"""The agent loop with scripted policies: outcomes, concurrency, resume, errors."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the envs)
from trace_envs.llm import AuthenticationFailed
from trace_envs.rollout import (
    EpisodeJob,
    RolloutSummary,
    TrajectoryStore,
    load_episodes,
    make_jobs,
    make_policy,
    run_episode,
    run_rollouts,
)
from trace_envs.rollout.scripted import OraclePolicy

from .conftest import ENV_ID


def test_oracle_episode_record() -> None:
    env = gym.make(ENV_ID)
    record = run_episode(env, make_policy("oracle"), env_id=ENV_ID, seed=3)
    assert record.success and record.reward == 1.0 and record.terminated and record.error is None
    assert record.task_id == "precondition_verification-3" and record.capability == "precondition_verification"
    assert record.components == {"db": 1.0, "communicate": 1.0}
    assert record.messages[0]["role"] == "system" and record.messages[1]["role"] == "user"
    assert record.tool_calls[0].name == "get_order_details" and record.tool_calls[0].result
    assert record.num_steps == len(record.actions) >= 2
    assert record.timings.wall_s >= record.timings.env_s > 0


@pytest.mark.parametrize(("spec", "expected"), [("oracle", 1.0), ("noop", 0.0), ("random", 0.0)])
def test_scripted_pass_rates(spec: str, expected: float) -> None:
    summary = run_rollouts(make_jobs([ENV_ID], range(12)), spec, concurrency=4)
    assert summary.episodes == 12 and summary.failed == 0
    assert summary.pass_rate == expected


def test_flawed_fails_exactly_the_eligible_tasks() -> None:
    records: list[Any] = []
    run_rollouts(make_jobs([ENV_ID], range(16)), "flawed:precondition_verification", on_episode=records.append)
    env = gym.make(ENV_ID)
    for record in records:
        env.reset(seed=record.seed)
        assert record.success == env.unwrapped.task.metadata["eligible"]  # cancelling blindly only works when allowed
    assert 0 < sum(r.success for r in records) < 16
    other = run_rollouts(make_jobs([ENV_ID], range(8)), "flawed:datetime_reasoning")
    assert other.pass_rate == 1.0  # the env's capability is not named: the oracle plays


def test_concurrency_does_not_change_results() -> None:
    jobs = make_jobs([ENV_ID], range(10), samples=2)
    one: list[Any] = []
    many: list[Any] = []
    run_rollouts(jobs, "random", concurrency=1, on_episode=one.append)
    run_rollouts(jobs, "random", concurrency=8, on_episode=many.append)

    def key(records: list[Any]) -> list[Any]:
        return sorted((r.seed, r.sample, r.actions, r.messages) for r in records)

    assert key(one) == key(many)


def test_resume_skips_finished_and_reruns_failed(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    with TrajectoryStore(path) as store:
        first = run_rollouts(make_jobs([ENV_ID], range(5)), "oracle", store=store)
    with TrajectoryStore(path) as store:
        second = run_rollouts(make_jobs([ENV_ID], range(8)), "oracle", store=store)
        third = run_rollouts(make_jobs([ENV_ID], range(8)), "noop", store=store)
    assert (first.episodes, second.skipped, second.episodes, third.episodes) == (5, 5, 3, 8)
    seeds = sorted((r.policy, r.seed) for r in load_episodes(path))
    assert seeds == sorted([("oracle", s) for s in range(8)] + [("noop", s) for s in range(8)])


class ExplodingPolicy(OraclePolicy):
    spec = "exploding"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        raise RuntimeError("model fell over")


class LockedOutPolicy(OraclePolicy):
    spec = "locked-out"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        raise AuthenticationFailed("HTTP 401: bad key")


def test_failed_episode_is_recorded_and_retried(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    jobs = [EpisodeJob(env_id=ENV_ID, seed=s) for s in range(3)]
    with TrajectoryStore(path) as store:
        summary = run_rollouts(jobs, lambda job: ExplodingPolicy(), policy_spec="oracle", store=store)
    assert summary.failed == 3 and summary.pass_rate == 0.0
    failed = load_episodes(path, include_failed=True)
    assert all(r.error and "model fell over" in r.error and r.ended == "error" for r in failed)
    with TrajectoryStore(path) as store:
        retry = run_rollouts(jobs, "oracle", store=store)
    assert (retry.skipped, retry.episodes, retry.successes) == (0, 3, 3)
    assert len(load_episodes(path)) == 3


def test_authentication_failure_stops_the_run() -> None:
    with pytest.raises(AuthenticationFailed):
        run_rollouts(make_jobs([ENV_ID], range(4)), lambda job: LockedOutPolicy(), policy_spec="x", concurrency=2)


def test_max_steps_truncates() -> None:
    summary_records: list[Any] = []
    run_rollouts(make_jobs([ENV_ID], [0]), "oracle", max_steps=1, on_episode=summary_records.append)
    (record,) = summary_records  # the oracle's first action is a lookup, so only max_steps can end it
    assert (record.num_steps, record.truncated, record.ended, record.success) == (1, True, "max_steps", False)


def test_unknown_policy_spec_fails_before_running() -> None:
    with pytest.raises(ValueError, match="unknown policy spec"):
        run_rollouts(make_jobs([ENV_ID], [0]), "oracel")


class BarePolicy:
    """Chooses actions but says nothing of its model or usage."""

    spec = "bare"

    def reset(self, env: Any, observation: str, info: dict[str, Any]) -> None:
        return None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return ""


def test_an_object_without_model_and_usage_is_not_a_policy() -> None:
    with pytest.raises(TypeError, match="BarePolicy is not a Policy: it needs spec, model, usage"):
        run_episode(gym.make(ENV_ID), BarePolicy(), env_id=ENV_ID, seed=0)  # type: ignore[arg-type]


def test_a_store_summary_counts_the_jobs_of_one_policy_earlier_runs_included(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    with TrajectoryStore(path) as store:
        run_rollouts(make_jobs([ENV_ID], range(3)), "oracle", store=store)
        run_rollouts(make_jobs([ENV_ID], range(5)), "oracle", store=store)  # two new, three skipped
        run_rollouts(make_jobs([ENV_ID], range(5)), "noop", store=store)  # another policy: not counted
    summary = RolloutSummary.of_store(path, make_jobs([ENV_ID], range(4)), "oracle")
    assert (summary.episodes, summary.successes, summary.failed) == (4, 4, 0)
    assert summary.per_env[ENV_ID]["episodes"] == 4


class BarrierPolicy(OraclePolicy):
    """A model-like policy: its first action waits in a worker thread (as a model client's request does) until
    every episode's request is waiting, so a rollout that cannot hold them all in flight at once fails."""

    spec = "barrier"

    def __init__(self, barrier: threading.Barrier) -> None:
        super().__init__()
        self.barrier, self.waited = barrier, False

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        if not self.waited:
            self.waited = True
            await asyncio.to_thread(self.barrier.wait)
        return self.act(observation, info)


def test_every_episode_in_flight_holds_a_request_at_once() -> None:
    """asyncio's default pool has cpu_count + 4 threads (6 on a 2-core machine): a rollout of 16 held only 6
    model requests in flight, so a batched local model never saw more than 5 prompts at once."""
    episodes = (os.cpu_count() or 1) + 8
    barrier = threading.Barrier(episodes, timeout=30)
    summary = run_rollouts(
        make_jobs([ENV_ID], range(episodes)),
        lambda job: BarrierPolicy(barrier),
        policy_spec="barrier",
        concurrency=episodes,
        spot_check_share=0.0,
    )
    assert summary.failed == 0 and summary.successes == episodes
