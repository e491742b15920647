"""``trace-envs demo`` end to end (run once per session), then what reruns when: nothing when nothing changed,
a stage whose config changed and the stages after it that read it, and ``--stage`` without its inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trace_envs.evaluation import load_results
from trace_envs.pipeline import STAGE_NAMES, StageError, TrainResult, demo_config, run_pipeline

from .conftest import trace_envs


def test_the_demo_finds_the_planted_deficits_and_writes_the_report(demo_run) -> None:  # type: ignore[no-untyped-def]
    out, output = demo_run
    markers = {s: json.loads((out / s / ".stage.json").read_text()) for s in STAGE_NAMES}
    assert all(m["status"] == "done" for m in markers.values())
    kept = {t: set(v["kept"]) for t, v in markers["analyze"]["summary"]["targets"].items()}
    assert kept == {
        "device": {"permission_error_recovery", "datetime_reasoning"},
        "retail": {"multi_step_task_completion"},
        "airline": {"multi_step_task_completion"},
    }
    synthesized = markers["synthesize"]["summary"]["targets"]
    assert all(e["status"] == "passed" for envs in synthesized.values() for e in envs.values())
    adapters = TrainResult.model_validate(markers["train"]["summary"]).adapters  # parsed back by its type
    assert sorted(adapters) == [
        "airline/multi_step_task_completion", "device/datetime_reasoning", "device/permission_error_recovery",
        "retail/multi_step_task_completion",
    ]  # fmt: skip
    assert all(a.steps == 2 and a.metadata.status == "complete" for a in adapters.values())
    for target in ("device", "retail", "airline"):
        results = load_results(out / "evaluate" / target)
        scores = {p.name: p.summary.overall.pass_rate.value for p in results.policies}
        assert scores["oracle"] == 1.0, target  # the gold policy solves every evaluated task
        assert scores["base"] < 1.0, target  # the planted deficits cost the base agent tasks
        assert {p.name for p in results.policies} == {"base", "oracle", "model", "routed"}
    html = (out / "report" / "report.html").read_text()
    markdown = (out / "report" / "report.md").read_text()
    assert "scripted" in markdown and "tiny random model" in markdown and "API key and a GPU" in markdown
    assert "<img" in html or "data:image/png;base64" in html
    assert "API key and a GPU" in output and "report.html" in output
    # the report covers every target: three analyses, four validated modules by target, each target's routing
    for target in ("device", "retail", "airline"):
        assert f"## Capability selection and coverage: {target}" in markdown
    assert "4 module(s) validated" in markdown and "by target: device 2, retail 1, airline 1" in markdown
    assert markdown.count("Route-only evaluation of `routed`") == 3
    assert "the first 9 of 48 device tasks" in markdown  # which tasks the evaluation used
    # the console: which tasks were evaluated, and the routing as a table, not a Python dict
    assert "device (first 9 of 48 tasks)" in output and "Routing of the rollout tasks" in output
    assert "{'" not in output


def test_a_rerun_with_nothing_changed_runs_nothing(demo_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    shutil.copytree(demo_run[0], out)
    outcomes = run_pipeline(demo_config(), out)
    assert [(o.name, o.action) for o in outcomes] == [(name, "cached") for name in STAGE_NAMES]


def test_a_changed_stage_reruns_with_the_stages_that_read_it(demo_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    shutil.copytree(demo_run[0], out)
    config = demo_config()
    config = config.model_copy(update={"route": config.route.model_copy(update={"enabled": False})})
    actions = {o.name: o.action for o in run_pipeline(config, out)}
    # route changed; evaluate reads rollout and train only, so it stays cached; the report reads route
    assert actions == {
        "rollout": "cached", "analyze": "cached", "synthesize": "cached", "train": "cached", "route": "ran",
        "evaluate": "cached", "report": "ran",
    }  # fmt: skip
    assert not list((out / "route").glob("*.routes.json"))  # the old routes went with the old inputs


def test_a_stage_alone_needs_its_inputs(tmp_path: Path) -> None:
    try:
        run_pipeline(demo_config(), tmp_path / "empty", only="analyze")
    except StageError as exc:
        message = str(exc)
    else:
        raise AssertionError("analyze ran without a rollout")
    assert message.startswith("stage analyze: needs the rollout stage's output")
    assert "run `trace-envs pipeline CONFIG --stage rollout` first" in message
    result = trace_envs("demo", "--out", str(tmp_path / "empty"), "--stage", "train")
    assert result.returncode == 2 and "stage train: needs the rollout stage's output" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_the_demo_report_renders_its_plots_in_a_headless_browser(demo_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.report.test_browser import chromium, probe

    binary = chromium()  # skips when no Chromium is installed
    page = demo_run[0] / "report" / "report.html"
    images = probe(binary, page, tmp_path)["images"]
    plots = sorted(p.name for p in page.parent.glob("*.png"))
    assert sorted(image["plot"] for image in images) == plots and len(plots) >= 5
    for image in images:
        assert image["width"] > 300 and image["colours"] > 20, f"{image['plot']} did not decode or is blank"
