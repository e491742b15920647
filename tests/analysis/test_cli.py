"""``trace-envs analyze`` end to end with the offline probes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .recorded import store_records

pytest.importorskip("typer")


def squash(text: str) -> str:
    """Without whitespace: the 80-column console wraps a long path mid-word."""
    return "".join(text.split())


def test_analyze_command_with_probes(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trace_envs.cli import build_app
    from trace_envs.rollout.store import TrajectoryStore

    store = tmp_path / "runs.jsonl"
    with TrajectoryStore(store, fsync=False) as writer:
        for record in store_records():
            writer.append(record)
    runner = CliRunner()
    out = tmp_path / "analysis"
    result = runner.invoke(
        build_app(), ["analyze", str(store), "--analyst", "probes", "--runs", "2", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "kept: precondition_verification" in result.output
    data = json.loads((out / "analysis.json").read_text())
    assert data["kept"] == ["precondition_verification"] and data["config"]["runs"] == 2
    assert (out / "report.md").exists()
    missing = runner.invoke(build_app(), ["analyze", str(tmp_path / "none.jsonl"), "--out", str(out)])
    assert missing.exit_code == 2 and squash("does not exist") in squash(missing.output)  # a usage error
    bad = runner.invoke(build_app(), ["analyze", str(store), "--rho", "2", "--out", str(out)])
    assert bad.exit_code != 0
    assert "analyze" in runner.invoke(build_app(), ["--help"]).output


def test_an_out_folder_of_another_store_is_refused(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trace_envs.cli import build_app
    from trace_envs.rollout.store import TrajectoryStore

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    records = store_records()
    for path, chosen in ((first, records), (second, records[: len(records) // 2])):
        with TrajectoryStore(path, fsync=False) as writer:
            for record in chosen:
                writer.append(record)
    out = tmp_path / "analysis"
    args = ["--analyst", "probes", "--runs", "1", "--out", str(out)]
    assert CliRunner().invoke(build_app(), ["analyze", str(first), *args]).exit_code == 0
    again = CliRunner().invoke(build_app(), ["analyze", str(first), *args, "--runs", "2"])  # same store: resumes
    assert again.exit_code == 0, again.output
    labels = (out / "labels.jsonl").read_bytes()
    other = CliRunner().invoke(build_app(), ["analyze", str(second), *args])
    assert other.exit_code == 2
    message = squash(other.output)
    assert squash(f"holds the analysis of another store ({first.resolve()}, not {second.resolve()})") in message
    assert squash("use another --out folder, or delete this one to start over") in message
    assert (out / "labels.jsonl").read_bytes() == labels  # nothing appended
    fresh = CliRunner().invoke(build_app(), ["analyze", str(second), *args[:-1], str(tmp_path / "fresh")])
    assert fresh.exit_code == 0, fresh.output
