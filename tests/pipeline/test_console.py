"""What the pipeline prints when it ends: the routing as a table (never a Python dict), and which evaluation
tasks were used when they are only the first few of a target's (so the pass rate can be set beside the
rollout's, which ran on all of them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from trace_envs.cli import pipeline as cli_pipeline
from trace_envs.pipeline import StageOutcome

ROUTE = StageOutcome(
    "route", "ran",
    {"targets": {"device": {"adapters": 2, "routes": {"permission_error_recovery": 48}},
                 "retail": {"adapters": 1, "routes": {"base": 6, "multi_step_task_completion": 3}},
                 "airline": {"adapters": 0, "routes": {}}}},
)  # fmt: skip
EVALUATE = StageOutcome(
    "evaluate", "ran",
    {"targets": {"device": {"base": {"pass_rate": 0.0, "episodes": 9}},
                 "retail": {"base": {"pass_rate": 2 / 3, "episodes": 9}}},
     "tasks": {"device": {"evaluated": 9, "available": 48, "limit": 9},
               "retail": {"evaluated": 9, "available": 9, "limit": 9}}},
)  # fmt: skip


def printed(outcomes: list[StageOutcome], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    console = Console(record=True, width=100)
    monkeypatch.setattr(cli_pipeline, "console", console)
    cli_pipeline.print_outcomes(outcomes, tmp_path)
    return console.export_text()


def test_the_route_summary_is_a_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = printed([ROUTE], tmp_path, monkeypatch)
    assert "{" not in text and "':" not in text  # no raw dict
    assert "route      ran      device 48 tasks; retail 9 tasks; airline 0 tasks (table below)" in text
    rows = [" ".join(line.replace("│", " ").split()) for line in text.splitlines() if "│" in line]
    assert "device 2 permission_error_recovery 48/48 (100%)" in rows
    assert "retail 1 base model alone 6/9 (67%)" in rows and "multi_step_task_completion 3/9 (33%)" in rows
    assert "airline 0 (no adapter: nothing routed) -" in rows


def test_the_evaluation_line_says_which_tasks_were_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = printed([EVALUATE], tmp_path, monkeypatch)
    assert "device (first 9 of 48 tasks): base 0%; retail: base 67%" in text
