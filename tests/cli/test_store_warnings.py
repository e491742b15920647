"""A damaged store line is one ``warning:`` line in every command that reads a store: what was skipped or
repaired and where, never Python's ``UserWarning`` with a line of our source under it."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.cli.warning_lines import user_warning_line
from trace_envs.rollout import StoreWarning

ENV_ID = "trace/order-cancel-v0"


def damaged_store(tmp_path: Path) -> Path:
    """Four oracle episodes; then line 2 is replaced by a non-record and half of a record is appended (torn)."""
    out = tmp_path / "x.jsonl"
    made = CliRunner().invoke(build_app(), ["rollout", "-e", ENV_ID, "-p", "oracle", "-n", "4", "-o", str(out)])
    assert made.exit_code == 0, made.output
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(lines[0] + b'{"broken": 1}\n' + b"".join(lines[2:]) + lines[1][:50])
    return out


def run(*args: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as outside pytest: each warning shown once
        result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code == 0, result.output
    return result.output


def assert_plain(output: str) -> None:
    assert "UserWarning" not in output and "StoreWarning" not in output and "warnings.warn" not in output


def test_analyze_names_the_torn_and_the_corrupt_line(tmp_path: Path) -> None:
    store = damaged_store(tmp_path)
    output = run("analyze", str(store), "--analyst", "probes", "--runs", "1", "--out", str(tmp_path / "a"))
    assert f"warning: {store}:2: skipping a line that is not an episode record" in output
    assert f"warning: {store}:5: skipping a torn last line (50 bytes) left by an interrupted write" in output
    assert_plain(output)


def test_rollout_says_it_cut_off_the_torn_line(tmp_path: Path) -> None:
    store = damaged_store(tmp_path)
    output = run("rollout", "-e", ENV_ID, "-p", "oracle", "-n", "4", "-o", str(store))
    assert f"warning: {store}: removed a torn last line (50 bytes) left by an interrupted write" in output
    assert f"warning: {store}:2: skipping a line that is not an episode record" in output
    assert_plain(output)


@pytest.mark.parametrize("category", [UserWarning, FutureWarning])
def test_other_warnings_keep_pythons_display(category: type[Warning]) -> None:
    assert user_warning_line("some library's warning", category) is None
    assert user_warning_line("x.jsonl:2: skipping\n a line", StoreWarning) == "warning: x.jsonl:2: skipping a line"
