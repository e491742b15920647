"""``baseline.json``: written and read back, and a bad file is named with its problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.baselines import BaselineRun, load_baseline_run, save_baseline_run


def test_round_trip(tmp_path: Path) -> None:
    run = BaselineRun(method="merge", env_ids=["trace/datetime-v0"], budget=64, rollouts_used=64, artifact="adapter")
    save_baseline_run(tmp_path / "out", run)
    assert load_baseline_run(tmp_path / "out") == run


def test_missing_and_malformed_records_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"baseline\.json does not exist"):
        load_baseline_run(tmp_path)
    (tmp_path / "baseline.json").write_text('{"method": "gepa", "rollouts_used": -1, "artifact": "p.txt"}')
    with pytest.raises(ValueError, match=r"baseline\.json: not a baseline record \(rollouts_used: "):
        load_baseline_run(tmp_path)
