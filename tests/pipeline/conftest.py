"""One demo run per session (``trace-envs demo`` in a subprocess, as a user runs it), shared by the pipeline tests,
and helpers to run the pipeline's command line in a subprocess and kill it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("matplotlib")

STAGE_TIMEOUT_S = 900


def command_env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def trace_envs(*args: str, timeout: float = STAGE_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """``trace-envs ARGS`` in a subprocess (the installed entry point's module)."""
    return subprocess.run(
        [sys.executable, "-m", "trace_envs.cli", *args], capture_output=True, text=True, env=command_env(),
        timeout=timeout,
    )  # fmt: skip


def _ready(ready: Callable[[], bool]) -> bool:
    """``ready()``, False while a folder it walks is renamed under it (e.g. ``base-model.partial`` moving into place)."""
    try:
        return ready()
    except FileNotFoundError:
        return False


def run_until(args: list[str], ready: Callable[[], bool], timeout: float = STAGE_TIMEOUT_S) -> bool:
    """Start ``trace-envs ARGS`` and SIGKILL its whole process group once ``ready()``; False if it finished first."""
    process = subprocess.Popen(
        [sys.executable, "-m", "trace_envs.cli", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=command_env(), start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if _ready(ready):
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return True
            time.sleep(0.05)
        return False
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> tuple[Path, str]:
    """The demo's output folder and its command's output. The whole demo runs once per test run: under
    pytest-xdist the first worker runs it and the others wait on a lock and reuse its folder."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    out, log = shared / "demo" / "trace-demo", shared / "demo" / "output.txt"
    with FileLock(str(shared / "demo.lock")):
        if not log.exists():
            result = trace_envs("demo", "--out", str(out))
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            log.write_text(result.stdout, encoding="utf-8")
    return out, log.read_text(encoding="utf-8")


def copy_through(source: Path, target: Path, stages: list[str]) -> Path:
    """A copy of a run folder holding only ``stages``' folders (what a run killed after them leaves)."""
    target.mkdir(parents=True)
    for name in stages:
        shutil.copytree(source / name, target / name)
    return target
