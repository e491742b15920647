"""``pytest --trace-env ID`` turns the property suite into test items, passing and failing."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO_ROOT

pytest_plugins = ["pytester"]


def test_plugin_runs_the_suite_on_a_good_env(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--trace-env", "trace/order-cancel-v0", "--trace-env-seeds", "5", "-q")
    result.assert_outcomes(passed=11)  # every property, constant_answer_fails and adversarial_junk_fails included


def test_plugin_reports_a_broken_env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT) + ":" + ":".join(sys.path))
    result = pytester.runpytest_subprocess(
        "--trace-env",
        "tracetest/broken-oracle-solves-v0",
        "--trace-env-import",
        "tests.testing.broken_envs",
        "--trace-env-seeds",
        "3",
        "--trace-env-fuzz",
        "5",
        "-q",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    result.stdout.fnmatch_lines(["*oracle scores 0.0 on seed*"])


def test_plugin_is_inert_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    assert True\n")
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1)
