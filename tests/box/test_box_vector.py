"""Boxed envs in gymnasium's ``AsyncVectorEnv``: each worker holds its own proxy and its own boxes (a forked
worker never uses or ends its parent's), the env crosses to a spawned worker as data, and closing the vector
env leaves no box running."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.vector import AsyncVectorEnv

import trace_envs
from trace_envs.box import BoxedEnv, default_pool
from trace_envs.box.launch import SHARED_TEMPORARY
from trace_envs.registry.sources import PATH_VARIABLE

from .conftest import GOOD

SERVER = b"trace_envs.box.server"


def boxes_under(folder: Path) -> list[int]:
    """Pids of live box processes whose scratch (their working directory) is under ``folder``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                running = SERVER in Path(f"/proc/{entry}/cmdline").read_bytes()
                if running and os.readlink(f"/proc/{entry}/cwd").startswith(str(folder)):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def make_vector(how: str, env_id: str) -> gym.vector.VectorEnv[Any, Any, Any]:
    """Two copies of ``env_id`` in an ``AsyncVectorEnv``, built the way ``how`` names."""
    if how == "make_vec":  # fork on Linux
        return gym.make_vec(env_id, num_envs=2, vectorization_mode="async")
    if how == "make_vec-spawn":
        return gym.make_vec(env_id, num_envs=2, vectorization_mode="async", vector_kwargs={"context": "spawn"})
    if how == "fork":
        return AsyncVectorEnv([lambda: gym.make(env_id)] * 2, context="fork")
    if how == "spawn":  # the spec crosses: the boxed class pickles as the text read at load time
        return AsyncVectorEnv([functools.partial(gym.make, gym.spec(env_id))] * 2, context="spawn")
    fns: list[Callable[[], gym.Env[Any, Any]]] = [functools.partial(gym.make, f"trace_envs:{env_id}")] * 2
    return AsyncVectorEnv(fns, context="spawn")  # "path": the worker's `import trace_envs` loads the folder


@pytest.mark.parametrize("how", ["make_vec", "make_vec-spawn", "fork", "spawn", "path"])
def test_a_boxed_env_runs_in_an_async_vector_env_and_leaves_no_box(
    how: str, tmp_path: Path, clean_ids: list[str], monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    env_id = f"trace/box-vector-{how}-v0"
    (folder / "cancel.py").write_text(GOOD + f"\nENV_ID = {env_id!r}\n", encoding="utf-8")
    monkeypatch.setenv(PATH_VARIABLE, str(folder))  # for "path": the spawned workers load it themselves
    assert trace_envs.load_envs(folder) == [env_id]  # boxed: one box started here, kept in this process's pool
    clean_ids.append(env_id)
    ours = [box for box in default_pool().boxes if box.alive]
    here = gym.make(env_id).unwrapped
    assert isinstance(here, BoxedEnv)
    expected = [here.reset(seed=seed) for seed in (0, 1)]
    here.close()
    # the workers' boxes make their scratch here: under /tmp, since a box's unprivileged uid cannot pass through
    # pytest's 0700 temporary root (a box's scratch would go to /tmp itself then)
    scratch = Path(tempfile.mkdtemp(prefix="trace-vector-test-", dir=SHARED_TEMPORARY))
    scratch.chmod(0o711)
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    vector = make_vector(how, env_id)
    try:
        observations, _ = vector.reset(seed=[0, 1])
        assert list(observations) == [observation for observation, _ in expected]
        assert len(boxes_under(scratch)) >= 2  # one box per worker (each box may be two processes: unshare)
        question = "Could you tell me your order id?"
        observations, _, terminated, _, _ = vector.step([question, question])
        assert all(isinstance(text, str) and text for text in observations) and not any(terminated)
    finally:
        vector.close()
    assert boxes_under(scratch) == [] and list(scratch.iterdir()) == []  # no box and no scratch left
    assert all(box.alive for box in ours)  # this process's boxes: untouched by its workers
    again = gym.make(env_id).unwrapped
    assert again.reset(seed=0) == expected[0]
    again.close()
