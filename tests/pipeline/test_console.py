"""What the pipeline prints when it ends: the routing as a table (never a Python dict), and which evaluation
tasks were used when they are only the first few of a target's (so the pass rate can be set beside the
rollout's, which ran on all of them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from trace_envs.cli import pipeline as cli_pipeline
from trace_envs.pipeline import EvaluateResult, RolloutResult, RouteResult, StageOutcome

ROUTE = StageOutcome(
    "route", "ran",
    RouteResult.model_validate(
        {"targets": {"device": {"adapters": 2, "routes": {"permission_error_recovery": 48}},
                     "retail": {"adapters": 1, "routes": {"base": 6, "multi_step_task_completion": 3}},
                     "airline": {"adapters": 0, "routes": {}}}}
    ),
)  # fmt: skip


def _evaluated(name: str, pass_rate: float, tasks: int, available: int) -> dict[str, Any]:
    """One target's evaluate result: the base policy's pass rate over ``tasks`` of ``available`` tasks."""
    rate = {"value": pass_rate}
    overall = {"domain": "overall", "tasks": tasks, "trials_per_task": 1, "pass_rate": rate, "mean_reward": rate}
    return {
        "results": f"evaluate/{name}/results.json",
        "target": {"name": name, "domains": [name], "source": "builtin", "tasks": tasks, "available": available,
                   "limit": 9},
        "policies": {"base": {"overall": overall, "episodes": 9}},
    }  # fmt: skip


EVALUATE = StageOutcome(
    "evaluate", "ran",
    EvaluateResult.model_validate(
        {"targets": {"device": _evaluated("device", 0.0, 9, 48), "retail": _evaluated("retail", 2 / 3, 9, 9)}}
    ),
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


SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def stage_rows(terminal: bool) -> dict[str, str]:
    """The first character of each stage row of a rerun (``rollout`` cached, so never started; ``analyze``
    running; ``train`` waiting), drawn on a console that is a terminal or a file."""
    import io

    from rich.progress import Progress

    console = Console(file=io.StringIO(), width=100, force_terminal=terminal)
    assert console.is_terminal == terminal
    progress = Progress(*cli_pipeline.stage_columns(console), console=console, auto_refresh=False)
    display = cli_pipeline.ProgressDisplay(progress, ("rollout", "analyze", "train"))
    display.stage_finished(StageOutcome("rollout", "cached", RolloutResult(policy="scripted")))
    display.stage_started("analyze", "ran")
    snapshot = Console(record=True, width=100)
    snapshot.print(progress.get_renderable())
    lines = [line for line in snapshot.export_text().splitlines() if line.strip()]
    return {name: next(line for line in lines if name in line)[:1] for name in ("rollout", "analyze", "train")}


def test_stage_rows_piped_to_a_file_show_no_spinner_glyph() -> None:
    rows = stage_rows(terminal=False)
    assert not set(rows.values()) & set(SPINNER_FRAMES), rows


def test_in_a_terminal_only_the_running_stage_spins() -> None:
    rows = stage_rows(terminal=True)
    assert rows["analyze"] in SPINNER_FRAMES, rows
    assert rows["rollout"] not in SPINNER_FRAMES and rows["train"] not in SPINNER_FRAMES, rows


def test_ctrl_c_in_the_demo_says_what_is_kept_and_how_to_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import trace_envs.pipeline as pipeline
    from trace_envs.cli import build_app
    from trace_envs.pipeline import runner

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "preflight_pending", lambda *args: None)
    monkeypatch.setattr(pipeline, "run_pipeline", interrupted)
    result = CliRunner().invoke(build_app(), ["demo", "--out", str(tmp_path / "demo")], terminal_width=200)
    assert result.exit_code == 130
    words = " ".join(result.output.split())
    assert f"interrupted: the finished stages are kept in {tmp_path / 'demo'}" in words, result.output
    assert "rerun the same command" in words
