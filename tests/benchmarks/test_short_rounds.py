"""Every script in benchmarks/ runs one short round and exits 0, so a benchmark nobody runs cannot rot.

The numbers it prints are not checked (tests never assert timings); only that it runs to the end.
A new benchmark needs an entry in ``SHORT_ROUNDS`` (the arguments of its shortest meaningful round) or a test of
its own in this folder, named in ``OWN_TESTS``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"

# script -> (arguments of one short round, "{tau2}" standing for shared/data/tau2; needs the train extra)
SHORT_ROUNDS: dict[str, tuple[list[str], bool]] = {
    "airline_throughput.py": (["--rounds", "1", "--calls", "20", "--data", "{tau2}/airline"], False),
    "analysis_probes.py": (["--seeds", "2", "--runs", "1"], False),
    "boxed_env.py": (
        ["--episodes", "2", "--boxes", "1", "--long-episodes", "3", "--train-steps", "1", "--train-rounds", "2"],
        True,
    ),
    "device_throughput.py": (["--rounds", "1"], False),
    "env_throughput.py": (["--episodes", "2", "--rounds", "1"], False),
    "fake_server_cost.py": (["--requests", "20", "--repeats", "1", "--concurrency", "4"], False),
    "paced_spot_checks.py": (["--checks", "1", "--pace", "0.01,0.02"], False),
    "proxy_checks.py": (["--seeds", "2", "--repeat", "2"], False),
    "rollout_overhead.py": (
        [
            *("--episodes", "10", "--repeats", "1", "--sequential-episodes", "2", "--concurrent-episodes", "8"),
            *("--concurrency", "4", "--workers", "1"),
        ],
        False,
    ),
    "spot_checks.py": (["--episodes", "20", "--rounds", "1"], False),
    "synthesis_gates.py": (["--seeds", "10", "--fuzz", "3", "--rounds", "1", "--data", "{tau2}"], False),
    "tau2_throughput.py": (["--deepcopies", "1", "--data", "{tau2}"], False),
    "train_step.py": (["--steps", "1"], True),
}


OWN_TESTS = {
    "learning.py": "test_learning.py",
    "local_generation.py": "test_local_generation.py",
    "trace_micro.py": "test_trace_micro.py",
    "relay_endpoint.py": "test_synthesis_real_model.py",
    "synthesis_real_model.py": "test_synthesis_real_model.py",
}
"""Benchmarks whose short round is a test of its own (it checks their result, not only that they run)."""


def test_every_benchmark_has_a_short_round() -> None:
    scripts = sorted(path.name for path in BENCHMARKS.glob("*.py"))
    assert scripts == sorted([*SHORT_ROUNDS, *OWN_TESTS]), "add each new benchmark's short round to SHORT_ROUNDS"
    assert all((Path(__file__).parent / test).is_file() for test in OWN_TESTS.values())


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SHORT_ROUNDS))
def test_benchmark_runs_one_short_round(script: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    args, needs_train = SHORT_ROUNDS[script]
    if any("{tau2}" in arg for arg in args):
        tau2 = request.getfixturevalue("shared_data") / "tau2"
        args = [arg.replace("{tau2}", str(tau2)) for arg in args]
    if needs_train:
        pytest.importorskip("trl", reason="needs the train extra")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert done.stdout.strip(), f"{script} printed nothing"
