"""The box runtime: a boxed env plays exactly like the module in-process, runs the validated text, and a box
that hangs, dies or breaks the protocol is a clear error, never a hang."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.box import (
    BoxCrashed,
    BoxedEnv,
    BoxedEnvError,
    BoxLimits,
    BoxPool,
    BoxProcess,
    boxed_env_class,
)
from trace_envs.box.launch import box_processes
from trace_envs.box.protocol import MODULE_NAME, PROTOCOL_VERSION, Start
from trace_envs.box.server import load_env
from trace_envs.core import CapabilityEnv
from trace_envs.registry import box_installed_env, env_kind, register_env
from trace_envs.rollout.scripted import play_actions

from ..conftest import grown_temp_files, temp_names
from .conftest import GOOD, GOOD_MODULE, synthesis_folder, with_payload


def in_process_env() -> CapabilityEnv:
    """The good module imported here (it is a trusted test fixture) for comparison."""
    spec = importlib.util.spec_from_file_location("box_test_good_module", GOOD_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    env: CapabilityEnv = module.RetailCancelEnv()
    return env


def boxed(source: str, pool: BoxPool) -> BoxedEnv:
    box = pool.acquire(source, {})
    pool.release(box, source, {})
    return boxed_env_class(source, box.ready, pool=pool)()


def test_a_synthesis_folder_is_boxed_and_plays_exactly_like_the_module_in_process(
    tmp_path: Path, clean_ids: list[str]
) -> None:
    folder = synthesis_folder(tmp_path / "envs", {"cancel.py": GOOD})
    (env_id,) = trace_envs.load_envs(folder)
    clean_ids.append(env_id)
    env = gym.make(env_id).unwrapped
    assert isinstance(env, BoxedEnv) and "box_test_good_module" not in str(type(env))
    here = in_process_env()
    for seed in range(3):
        assert env.reset(seed=seed) == here.reset(seed=seed)
        assert env.current_task == here.current_task
        assert env.oracle_actions() == here.oracle_actions() and env.flawed_actions() == here.flawed_actions()
        assert env.gold_hash() == here.gold_hash()
        assert env.domain.state_hash(env.state) == here.domain.state_hash(here.state)
        for action in [*env.oracle_actions(), "###STOP###"]:
            ours, theirs = env.step(action), here.step(action)
            assert ours == theirs
            if ours[2] or ours[3]:
                break
        assert ours[1] == 1.0 and env.verify() == here.verify()
    with pytest.raises(ValueError, match="synthesis output folder"):
        trace_envs.load_envs(folder, boxed=False)
    env.close()


def test_the_box_runs_the_validated_text_not_what_the_file_holds_later(tmp_path: Path, clean_ids: list[str]) -> None:
    folder = synthesis_folder(tmp_path / "envs", {"cancel.py": GOOD})
    (env_id,) = trace_envs.load_envs(folder)
    clean_ids.append(env_id)
    (folder / "cancel.py").write_text(with_payload("raise RuntimeError('the edited file ran')"), encoding="utf-8")
    env = gym.make(env_id).unwrapped
    env.reset(seed=1)
    assert play_actions(env, env.oracle_actions(), seed=1)[0] == 1.0
    env.close()
    with pytest.raises(trace_envs.registry.manifest.UnvalidatedModule, match="was edited since it was validated"):
        trace_envs.load_envs(folder)


def test_a_hung_step_ends_the_episode_with_an_error_observation_and_reset_takes_a_fresh_box() -> None:
    source = with_payload("if action == 'hang':\n    while True:\n        pass", at="step")
    with BoxPool(BoxLimits(step_seconds=2)) as pool:
        env = boxed(source, pool)
        env.reset(seed=0)
        start = time.monotonic()
        observation, reward, terminated, _, info = env.step("hang")
        assert time.monotonic() - start < 10
        assert terminated and reward == 0.0
        assert "did not answer within 2 s (BoxLimits.step_seconds) during step" in info["box_error"]
        assert observation.startswith("Error: the environment failed") and info["ended"] == "box_error"
        env.reset(seed=0)
        assert play_actions(env, env.oracle_actions(), seed=0)[0] == 1.0
        assert pool.started == 2


def test_a_box_that_dies_or_breaks_the_protocol_is_a_clear_error() -> None:
    dying = with_payload("if action == 'die':\n    import os\n    os._exit(3)", at="step")
    lying = with_payload(
        "if action == 'lie':\n    import os, sys\n    os.write(int(sys.argv[2]), b'{\"kind\": \"step\"}\\n')", at="step"
    )
    with BoxPool(BoxLimits(wall_seconds=20)) as pool:
        env = boxed(dying, pool)
        env.reset(seed=0)
        assert "exited with code 3 during step" in env.step("die")[4]["box_error"]
        env = boxed(lying, pool)
        env.reset(seed=0)
        assert "not one of the protocol" in env.step("lie")[4]["box_error"]
    with BoxPool(BoxLimits(wall_seconds=20)) as pool:  # dies at its second reset: the reset takes a fresh box
        env = boxed(with_payload("if self.task is not None:\n    import os\n    os._exit(0)"), pool)
        env.reset(seed=0)
        env.reset(seed=1)
        assert pool.started == 2 and "exited with code 0 during reset" in str(pool.failures[0])
        assert pool.failure_counts == {"crashed": 1}
    with BoxPool(BoxLimits(wall_seconds=20)) as pool:  # dies at every reset: the second try's failure is raised
        env = boxed(with_payload("import os\nos._exit(0)"), pool)
        with pytest.raises(BoxCrashed, match="exited with code 0 during reset"):
            env.reset(seed=1)
        assert pool.started == 2


def test_an_exception_of_the_env_comes_back_with_the_module_line() -> None:
    with BoxPool() as pool:
        env = boxed(with_payload("if action == 'boom':\n    raise ValueError('boom')", at="step"), pool)
        env.reset(seed=0)
        with pytest.raises(BoxedEnvError, match="ValueError: boom") as raised:
            env.step("boom")
        assert raised.value.line is not None and raised.value.line > GOOD.count("\n")
        assert play_actions(env, env.oracle_actions(), seed=0)[0] == 1.0  # the box lives on


@pytest.mark.parametrize("spin", [0.0, 0.00001, 0.005])
def test_calls_are_served_whether_they_come_within_the_spin_or_after_it(spin: float) -> None:
    """Each side polls ``spin_seconds`` for the other's message, then sleeps: a call served either way is the same."""
    with BoxPool(BoxLimits(spin_seconds=spin)) as pool:
        env = boxed(GOOD, pool)
        for seed, pause in ((0, 0.0), (1, 0.05), (2, 0.0)):
            env.reset(seed=seed)
            actions = env.oracle_actions()
            time.sleep(pause)  # 50 ms: past any spin, so the box and this process sleep and are woken
            assert play_actions(env, actions, seed=seed)[0] == 1.0


def test_a_process_with_over_1024_open_files_still_plays_a_boxed_env() -> None:
    """The pipes of a box opened by a busy process have numbers past select()'s 1,024 on both sides."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this process may open at most {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with BoxPool() as pool:
            env = boxed(GOOD, pool)
            env.reset(seed=0)
            assert min(env._box._requests, env._box._replies) > 1024
            assert play_actions(env, env.oracle_actions(), seed=0)[0] == 1.0
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _group_cpu_seconds(group: int) -> float:
    """User + system CPU time of every process in process group ``group`` (from /proc)."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def test_an_idle_box_sleeps_after_its_spin() -> None:
    with BoxPool(BoxLimits(spin_seconds=0.01)) as pool:
        env = boxed(GOOD, pool)
        env.reset(seed=0)
        group = env._box.process.pid
        before = _group_cpu_seconds(group)
        time.sleep(1.0)
        assert _group_cpu_seconds(group) - before < 0.2  # polled at most 10 ms, then slept
        assert play_actions(env, env.oracle_actions(), seed=0)[0] == 1.0


def test_a_pool_reuses_a_box_across_episodes_until_its_reset_budget() -> None:
    with BoxPool(BoxLimits(resets_per_box=4), spares=False) as pool:
        boxes = []
        for _ in range(2):
            env = boxed(GOOD, pool)
            env.reset(seed=0)
            boxes.append(env._box)
            env.close()
        assert boxes[0] is boxes[1] and pool.started == 1
        env = boxed(GOOD, pool)
        for seed in range(3):  # the first two take the box's 3rd and 4th resets; the third, a new box's
            env.reset(seed=seed)
            assert env.step(env.oracle_actions()[0])[0] != ""
        assert env._box is not boxes[0] and pool.started == 2 and pool.started_in_background == 0


def oracle_episode(env: BoxedEnv, seed: int) -> float:
    """One reset (exactly one, unlike ``play_actions`` after a reset) and the oracle's actions: the last reward."""
    env.reset(seed=seed)
    reward: float = 0.0
    for action in env.oracle_actions():
        _, step_reward, terminated, truncated, _ = env.step(action)
        reward = float(step_reward)
        if terminated or truncated:
            break
    return reward


def test_a_used_up_box_is_replaced_by_a_successor_started_in_the_background() -> None:
    with BoxPool(BoxLimits(resets_per_box=4)) as pool:
        env = boxed(GOOD, pool)
        first = env._box
        env.reset(seed=0)
        assert pool.started == 1  # one reset of four: no successor yet
        for seed in range(1, 5):  # the 2nd reset asks for the successor; the 5th takes it
            assert oracle_episode(env, seed) == 1.0
        assert env._box is not first and env._box.resets == 1
        assert pool.started == 2 and pool.started_in_background == 1
        assert first is not None and first.gone  # the used-up box was closed, not kept


def test_a_successor_that_fails_to_start_costs_one_retry_and_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with BoxPool(BoxLimits(resets_per_box=2)) as pool:
        env = boxed(GOOD, pool)
        real, calls = pool._start, []

        def first_start_fails(*args: Any) -> BoxProcess:
            calls.append(args)
            if len(calls) == 1:
                raise BoxCrashed("the box exited with code 9 during import", stage="import")
            return real(*args)

        monkeypatch.setattr(pool, "_start", first_start_fails)
        env.reset(seed=0)  # half its budget: the successor's start (the first patched one) fails
        env.reset(seed=1)
        assert oracle_episode(env, 2) == 1.0  # used up: the failed successor's error, then a box started here
        assert pool.failure_counts == {"crashed": 1} and "code 9" in str(pool.failures[0])
        assert pool.started == 2 and pool.started_in_background == 0


def test_closing_a_pool_ends_a_successor_still_starting() -> None:
    pool = BoxPool()
    pool.prepare(GOOD, {})
    pool.close()
    (record,) = pool.boxes
    assert not isinstance(record, BoxProcess) and box_processes(record.run_id) == []


def test_every_box_looks_the_same_but_for_a_fresh_hash_seed() -> None:
    probe = with_payload(
        "import os, sys\n"
        "raise RuntimeError(__import__('json').dumps({'name': __name__, 'environ': sorted(os.environ), "
        "'seed': os.environ.get('PYTHONHASHSEED'), 'cwd_is_tmp': os.environ.get('TMPDIR') == os.getcwd()}))"
    )
    seen = []
    for _ in range(2):
        with BoxPool() as pool, pytest.raises(BoxedEnvError) as raised:
            boxed(probe, pool).reset(seed=0)
        seen.append(json.loads(str(raised.value).partition(": ")[2]))
    assert all(view["name"] == MODULE_NAME and view["cwd_is_tmp"] for view in seen)
    assert seen[0]["environ"] == seen[1]["environ"]
    assert "HOME" not in seen[0]["environ"] and not any("KEY" in name for name in seen[0]["environ"])
    assert seen[0]["seed"] != seen[1]["seed"]


def test_the_scratch_has_a_size_quota() -> None:
    filler = with_payload(
        "import os\nwritten = 0\ntry:\n"
        "    for index in range(64):\n"
        "        with open(os.path.join(os.environ['TMPDIR'], f'fill{index}'), 'wb') as handle:\n"
        "            handle.write(bytes(4 * 2**20))\n"
        "        written += 4 * 2**20\n"
        "except OSError:\n    pass\nraise RuntimeError(f'wrote {written}')"
    )
    limits = BoxLimits(scratch_bytes=16 * 2**20, file_size_bytes=8 * 2**20)
    with BoxPool(limits) as pool:
        env = boxed(filler, pool)
        if not any("scratch quota" in claim for claim in pool.boxes[0].sealed):
            pytest.skip("no mount namespace here: the quota needs one (RLIMIT_FSIZE still bounds each file)")
        with pytest.raises(BoxedEnvError, match="wrote") as raised:
            env.reset(seed=0)
    assert int(str(raised.value).rsplit(" ", 1)[1]) <= 16 * 2**20


def test_a_flood_of_output_reaches_no_disk_and_closes_the_stream_at_its_limit(tmp_path: Path) -> None:
    """A module that prints without end: the parent drains its stdout and stderr, keeping only their ends; past
    ``output_bytes`` the stream is closed, the module's next print fails like any error of its env, and no file
    outside the scratch ever held what it wrote."""
    flood = with_payload(
        "import sys\nwritten = 0\ntry:\n"
        "    for _ in range(256):\n"
        "        sys.stdout.write('x' * 65536 + '\\n')\n        sys.stdout.flush()\n"
        "        written += 65537\n"
        "except OSError as exc:\n    raise RuntimeError(f'print failed after {written}') from exc\n"
        "sys.stderr.write('not over yet\\n')"
    )
    before = temp_names()
    with BoxPool(BoxLimits(output_bytes=1 * 2**20)) as pool:
        env = boxed(flood, pool)
        with pytest.raises(BoxedEnvError, match="print failed after") as raised:
            env.reset(seed=0)
        written = int(str(raised.value).rsplit(" ", 1)[1])
        assert 2**20 - 65537 <= written <= 2**20 + 2 * 65537  # the pipe's own buffer holds a little more
        box = pool.boxes[0]
        box.close()
        tail = box.stdout_tail()
    assert tail.endswith("[stdout closed after 1,048,576 bytes (BoxLimits.output_bytes)]")
    assert len(tail) < 2100 and tail.startswith("x")  # only the end is kept
    assert not os.path.exists(box.scratch), "the box's scratch outlived it"
    assert not grown_temp_files(before)


def test_a_box_that_prints_a_little_keeps_its_whole_stderr_for_the_error_message() -> None:
    noisy = with_payload("import sys\nprint('to stdout')\nsys.stderr.write('the env said why\\n')\nraise KeyError('x')")
    with BoxPool() as pool:
        env = boxed(noisy, pool)
        with pytest.raises(BoxedEnvError, match="KeyError"):
            env.reset(seed=0)
        box = pool.boxes[0]
        box.close()
    assert box.stdout_tail() == "to stdout\n" and box.stderr_tail() == "the env said why\n"


def test_a_box_refuses_another_protocol_version() -> None:
    with pytest.raises(RuntimeError, match=f"protocol version 99 asked, this box speaks {PROTOCOL_VERSION}"):
        load_env(Start(version=99, source="raise SystemExit('must not run')"))


def test_a_module_that_fails_at_import_is_an_import_error_of_load_envs(tmp_path: Path) -> None:
    folder = synthesis_folder(tmp_path / "envs", {"broken.py": with_payload("raise KeyError('nope')", at="import")})
    with pytest.raises(ImportError, match="failed in its box: KeyError"):
        trace_envs.load_envs(folder)


def test_a_box_process_is_gone_after_close() -> None:
    box = BoxProcess(GOOD)
    pid = box.process.pid
    box.close()
    assert (box.process.poll() is not None and not Path(f"/proc/{pid}").exists()) or box.process.returncode is not None


@pytest.mark.parametrize("env_id", ["trace/order-cancel-v0", "trace/precondition-v0"])
def test_an_installed_env_can_be_boxed_too_and_plays_the_same(env_id: str, clean_ids: list[str]) -> None:
    boxed_id = box_installed_env(env_id)
    clean_ids.append(boxed_id)
    assert boxed_id == env_id.replace("-v0", "-boxed-v0") and env_kind(boxed_id) == "boxed"
    ours, theirs = gym.make(boxed_id).unwrapped, gym.make(env_id).unwrapped
    assert isinstance(ours, BoxedEnv) and not isinstance(theirs, BoxedEnv)
    for seed in (0, 7):
        assert ours.reset(seed=seed) == theirs.reset(seed=seed)
        actions = theirs.oracle_actions()
        assert ours.oracle_actions() == actions
        assert play_actions(ours, actions, seed=seed) == play_actions(theirs, actions, seed=seed)
    ours.close()


@pytest.mark.parametrize(
    ("env_id", "why"),
    [
        ("trace/tau2-retail-v0", "is not a capability env run here .*tau2_target.*run in-process"),
        ("trace/device-v0", "is not a capability env run here .*device_target"),
    ],
)
def test_an_env_that_cannot_be_boxed_is_refused_with_the_reason(env_id: str, why: str) -> None:
    with pytest.raises(ValueError, match=f"{env_id}.*{why}"):
        box_installed_env(env_id)
    assert env_id.replace("-v0", "-boxed-v0") not in gym.registry


def test_a_capability_env_of_a_package_module_is_refused(clean_ids: list[str]) -> None:
    env_id = "trace/box-relative-v0"
    register_env(env_id, "trace_envs.targets.device.env:DeviceEnv")
    clean_ids.append(env_id)
    with pytest.raises(ValueError, match=f"{env_id}.*imports relatively"):
        box_installed_env(env_id)


def test_the_path_variable_registers_a_synthesis_folder_boxed_for_the_cli(tmp_path: Path) -> None:
    """``TRACE_ENVS_PATH`` in a fresh process (as a training or rollout worker gets it): list, describe, play."""
    import os
    import subprocess
    import sys

    folder = synthesis_folder(tmp_path / "envs", {"cancel.py": GOOD})
    environment = {**os.environ, "TRACE_ENVS_PATH": str(folder), "PYTHONPATH": str(Path(__file__).parents[2])}
    code = (
        "import gymnasium as gym, trace_envs\n"
        "from trace_envs.box import BoxedEnv\n"
        "env = gym.make('trace/precondition-verification-v0').unwrapped\n"
        "print(isinstance(env, BoxedEnv), 'box_test_good_module' in __import__('sys').modules)\n"
    )
    made = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=300)
    assert made.stdout.split() == ["True", "False"], made.stderr[-2000:]
    played = subprocess.run(
        [sys.executable, "-m", "trace_envs.cli", "play", "trace/precondition-verification-v0", "--policy", "oracle"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert played.returncode == 0 and "success" in played.stdout and "True" in played.stdout, played.stderr[-2000:]


def test_rollout_workers_play_a_boxed_folder(tmp_path: Path, clean_ids: list[str]) -> None:
    """Spawned rollout workers load the folder themselves (boxed): the parent sends them no boxed class."""
    from trace_envs.rollout import make_jobs, run_rollouts

    source = GOOD + '\nENV_ID = "trace/box-workers-v0"\n'  # an id no other folder of this session registers
    (env_id,) = trace_envs.load_envs(synthesis_folder(tmp_path / "envs", {"cancel.py": source}))
    assert env_id == "trace/box-workers-v0"
    clean_ids.append(env_id)
    summary = run_rollouts(make_jobs([env_id], range(4)), "oracle", workers=2)
    assert summary.episodes == 4 and summary.failed == 0 and summary.pass_rate == 1.0


def test_a_folder_of_your_own_is_boxed_unless_boxed_false_is_asked(tmp_path: Path, clean_ids: list[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "cancel.py").write_text(GOOD + '\nENV_ID = "trace/box-own-v0"\n', encoding="utf-8")
    (env_id,) = trace_envs.load_envs(folder)
    clean_ids.append(env_id)
    env = gym.make(env_id).unwrapped
    assert env_id == "trace/box-own-v0" and isinstance(env, BoxedEnv)
    env.reset(seed=2)
    assert play_actions(env, env.oracle_actions(), seed=2)[0] == 1.0
    env.close()
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / "cancel.py").write_text(GOOD + '\nENV_ID = "trace/box-own-trusted-v0"\n', encoding="utf-8")
    (env_id,) = trace_envs.load_envs(trusted, boxed=False)  # your own code, imported here as you asked
    clean_ids.append(env_id)
    here = gym.make(env_id).unwrapped
    assert isinstance(here, CapabilityEnv) and not isinstance(here, BoxedEnv)
