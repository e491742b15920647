"""Kill a rollout process mid-run, rerun it: the remaining episodes finish, none twice, no corrupt line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trace_envs.rollout import TrajectoryStore, iter_episodes, load_episodes, make_jobs, run_rollouts

from .conftest import ENV_ID

EPISODES = 200
SCRIPT = """
import sys, time
import trace_envs
import pytest

from trace_envs.rollout import TrajectoryStore, make_jobs, run_rollouts
from trace_envs.rollout.scripted import OraclePolicy

class SlowOracle(OraclePolicy):
    def act(self, observation, info):
        time.sleep(0.01)  # a model that takes 10 ms per answer
        return super().act(observation, info)

with TrajectoryStore(sys.argv[1]) as store:
    run_rollouts(make_jobs([{env!r}], range({n})), lambda job: SlowOracle(), policy_spec="oracle", store=store,
                 concurrency=4)
"""


def test_kill_then_rerun_finishes_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "x.jsonl"
    script = tmp_path / "rollout.py"
    script.write_text(SCRIPT.format(env=ENV_ID, n=EPISODES))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen([sys.executable, str(script), str(path)], env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b"\n") >= 20:
                break
            if process.poll() is not None:
                raise AssertionError(f"the rollout process ended early with {process.returncode}")
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    done_before = path.read_bytes().count(b"\n")
    assert 20 <= done_before < EPISODES
    with path.open("ab") as handle:  # as if the kill had landed in the middle of writing a line
        handle.write(b'{"format": "trace-envs/episode@1", "env_id": "trace/ord')

    store = TrajectoryStore(path)
    with pytest.warns(UserWarning, match="torn last line"):
        store.open()
    summary = run_rollouts(make_jobs([ENV_ID], range(EPISODES)), "oracle", store=store, concurrency=8)
    store.close()
    assert summary.skipped == done_before and summary.episodes == EPISODES - done_before

    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert all(json.loads(line)["env_id"] == ENV_ID for line in lines[:-1])  # every line is whole
    records = list(iter_episodes(path))
    seeds = [r.seed for r in records]
    assert sorted(seeds) == list(range(EPISODES))  # each episode exactly once
    assert all(r.success for r in load_episodes(path))
