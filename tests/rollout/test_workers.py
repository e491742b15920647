"""Rollouts over worker processes: same episodes as one process, one line each in the shared store,
resume, envs registered at run time, model policies, and failures that stop the run with a reason."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.llm import AuthenticationFailed
from trace_envs.llm.fake_server import FakeModelServer, order_cancel_agent
from trace_envs.rollout import EpisodeRecord, TrajectoryStore, load_episodes, make_jobs, run_rollouts

ENV_ID = "trace/order-cancel-v0"
RUNTIME_ENV_ID = "workerstest/order-cancel-v0"
DYING_ENV_ID = "workerstest/dies-v0"


def dying_env(**_: Any) -> gym.Env[Any, Any]:
    """An env whose construction kills its process (stands in for a worker killed mid-run)."""
    os._exit(3)


def outcome(record: EpisodeRecord) -> tuple[Any, ...]:
    return record.env_id, record.seed, record.success, record.reward, tuple(record.actions), record.num_steps


def test_workers_play_the_same_episodes_once_each_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    seen: list[EpisodeRecord] = []
    jobs = make_jobs([ENV_ID, "trace/precondition-v0"], range(12))
    with TrajectoryStore(path) as store:
        summary = run_rollouts(jobs, "oracle", store=store, workers=2, concurrency=4, on_episode=seen.append)
    assert summary.episodes == len(seen) == 24 and summary.failed == 0 and summary.pass_rate == 1.0
    assert summary.steps == sum(r.num_steps for r in seen)
    stored = load_episodes(path)
    assert sorted(r.key for r in stored) == sorted(r.key for r in seen)  # one line per episode
    alone = run_rollouts(jobs, "oracle", on_episode=seen.append)
    assert sorted(map(outcome, stored)) == sorted(map(outcome, seen[24:]))  # same as in one process
    assert alone.episodes == 24
    with TrajectoryStore(path) as store:
        again = run_rollouts(make_jobs([ENV_ID], range(16)), "oracle", store=store, workers=2)
    assert again.skipped == 12 and again.episodes == 4
    assert sorted(r.seed for r in load_episodes(path) if r.env_id == ENV_ID) == list(range(16))


def test_an_env_registered_at_run_time_reaches_the_workers() -> None:
    gym.register(
        RUNTIME_ENV_ID, entry_point="generated_envs.order_cancel:OrderCancelEnv", kwargs={"distractor_orders": 0}
    )
    try:
        summary = run_rollouts(make_jobs([RUNTIME_ENV_ID], range(4)), "oracle", workers=2)
    finally:
        del gym.registry[RUNTIME_ENV_ID]
    assert summary.episodes == 4 and summary.pass_rate == 1.0
    assert list(summary.per_env) == [RUNTIME_ENV_ID]


@pytest.mark.parametrize("boxed", [True, False])
def test_envs_loaded_from_a_folder_reach_the_workers(tmp_path: Path, boxed: bool) -> None:
    """Boxed: the worker gets the class (it pickles as the text read at load time); imported: it imports too."""
    (tmp_path / "renamed.py").write_text(
        "from generated_envs.order_cancel import OrderCancelEnv\n"
        "from trace_envs.core import Capability\n\n"
        "class WorkerEnv(OrderCancelEnv):\n"
        "    capability = Capability(name='worker_order_cancel', description='Cancel the named order.')\n",
        encoding="utf-8",
    )
    (env_id,) = trace_envs.load_envs(tmp_path, boxed=boxed)
    if boxed:  # an edit after loading changes nothing, in the workers either
        (tmp_path / "renamed.py").write_text("raise RuntimeError('the edited file ran')\n", encoding="utf-8")
    try:
        summary = run_rollouts(make_jobs([env_id], range(4)), "oracle", workers=2)
    finally:
        del gym.registry[env_id]
    assert summary.episodes == 4 and summary.pass_rate == 1.0 and list(summary.per_env) == [env_id]


def test_model_policy_in_workers(tmp_path: Path) -> None:
    seen: list[EpisodeRecord] = []
    with FakeModelServer(order_cancel_agent) as server:
        summary = run_rollouts(
            make_jobs([ENV_ID], range(8)), f"openai:{server.openai_url}#agent", workers=2, concurrency=8,
            sampling={"temperature": 0.0}, on_episode=seen.append,
        )  # fmt: skip
        assert all(request.body["temperature"] == 0.0 for request in server.requests)
    assert summary.episodes == 8 and summary.pass_rate == 1.0
    assert summary.usage.input_tokens == sum(r.usage.input_tokens for r in seen) > 0


def test_authentication_failure_in_a_worker_stops_the_run() -> None:
    with FakeModelServer(order_cancel_agent, api_key="right") as server, pytest.raises(AuthenticationFailed):
        run_rollouts(
            make_jobs([ENV_ID], range(4)), f"openai:{server.openai_url}#agent", workers=2,
            model_options={"api_key": "wrong"},
        )  # fmt: skip


def test_a_worker_that_dies_is_reported(tmp_path: Path) -> None:
    gym.register(DYING_ENV_ID, entry_point=f"{__name__}:dying_env")
    try:
        with pytest.raises(RuntimeError, match=r"exited with code 3 without finishing.*rerunning"):
            run_rollouts(make_jobs([DYING_ENV_ID], range(2)), "oracle", workers=2)
    finally:
        del gym.registry[DYING_ENV_ID]


def test_workers_need_a_spec_string_and_a_positive_count() -> None:
    from trace_envs.rollout import make_policy

    with pytest.raises(ValueError, match="spec string"):
        run_rollouts(make_jobs([ENV_ID], range(2)), lambda job: make_policy("oracle"), workers=2, policy_spec="oracle")
    with pytest.raises(ValueError, match="workers must be >= 1"):
        run_rollouts(make_jobs([ENV_ID], range(2)), "oracle", workers=0)


def test_jobs_are_sharded_by_task_unless_there_are_fewer_tasks_than_workers() -> None:
    from trace_envs.rollout.workers import shard_by_task

    jobs = make_jobs([ENV_ID, "trace/precondition-v0"], range(3), samples=2)  # 6 tasks x 2 samples
    shards = shard_by_task(jobs, 4)
    assert sorted(len(s) for s in shards) == [2, 2, 4, 4]
    assert sorted((j.env_id, j.seed, j.sample) for s in shards for j in s) == sorted(
        (j.env_id, j.seed, j.sample) for j in jobs
    )
    for shard in shards:  # a task's samples never straddle two shards
        others = [j for s in shards if s is not shard for j in s]
        assert not {(j.env_id, j.seed) for j in shard} & {(j.env_id, j.seed) for j in others}
    one_task = make_jobs([ENV_ID], [0], samples=5)
    assert [len(s) for s in shard_by_task(one_task, 2)] == [3, 2]  # one task, many samples: still both busy
