"""The example custom env is complete, short, and passes the whole property suite."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from trace_envs.testing import check_capability_env

EXAMPLES = REPO_ROOT / "examples"


@pytest.fixture(scope="module")
def library_env() -> str:
    sys.path.insert(0, str(EXAMPLES))
    importlib.import_module("library_env")
    return "trace/example-library-v0"


def test_example_is_under_150_lines() -> None:
    assert len((EXAMPLES / "library_env.py").read_text().splitlines()) < 150


def test_example_passes_the_property_suite(library_env: str) -> None:
    assert check_capability_env(library_env, seeds=range(100), fuzz_examples=30).passed


def test_example_runs_as_a_script() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "library_env.py")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "reward: 1.0" in result.stdout
