"""``trace-envs analyze`` end to end with the offline probes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .recorded import store_records

pytest.importorskip("typer")


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
    assert missing.exit_code == 1 and "does not exist" in " ".join(missing.output.split())
    bad = runner.invoke(build_app(), ["analyze", str(store), "--rho", "2", "--out", str(out)])
    assert bad.exit_code != 0
    assert "analyze" in runner.invoke(build_app(), ["--help"]).output
