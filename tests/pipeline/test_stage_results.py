"""Stage results are typed: every stage declares a pydantic result model, the runner refuses a stage that returns
anything else (a dict), caches the result in the stage's marker and parses it back by the stage's type, and runs a
stage again whose cached result no longer parses. Each stage key is computed once per run, and a stage body is
handed one target at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from trace_envs.pipeline import RolloutResult, StageOutcome, TrainResult, demo_config, run_pipeline
from trace_envs.pipeline import runner as runner_module
from trace_envs.pipeline.cache import MARKER, read_marker, write_marker
from trace_envs.pipeline.context import StageContext
from trace_envs.pipeline.results import STAGE_RESULTS, StageResult
from trace_envs.pipeline.runner import STAGES, Stage, StageKeys, checked_result

CALLS: list[str] = []
"""The fake stages that ran, in order."""


def fake_rollout(ctx: StageContext) -> RolloutResult:
    """A stage that writes one file and returns its typed result."""
    CALLS.append(ctx.name)
    (ctx.folder / "out.txt").write_text("rolled out", encoding="utf-8")
    return RolloutResult(policy="scripted")


def fake_train(ctx: StageContext) -> TrainResult:
    """A stage that reads the rollout's result by its type."""
    CALLS.append(ctx.name)
    (ctx.folder / "out.txt").write_text("trained", encoding="utf-8")
    return TrainResult(model=ctx.result(RolloutResult).policy)


def untyped(ctx: StageContext) -> RolloutResult:
    """A stage that breaks its declaration: it returns a dict."""
    return {"policy": "scripted"}  # type: ignore[return-value]


def undeclared(ctx: StageContext) -> Any:
    """A stage that declares no result model."""
    return RolloutResult(policy="scripted")


def fake_stages(rollout: Any = fake_rollout, sections: list[str] | None = None) -> tuple[Stage, ...]:
    """Two quick stages (rollout, then train reading it); ``sections`` records each config-section read."""

    def section(name: str) -> Any:
        def read(config: Any) -> dict[str, str]:
            if sections is not None:
                sections.append(name)
            return {"stage": name}

        return read

    return (
        Stage("rollout", rollout, (), section("rollout")),
        Stage("train", fake_train, ("rollout",), section("train")),
    )


@pytest.fixture(autouse=True)
def no_preflight(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake stages need no keys, endpoints or extras."""
    import importlib

    CALLS.clear()
    monkeypatch.setattr(importlib.import_module("trace_envs.pipeline.preflight"), "require_preflight", lambda *a: None)


def test_every_stage_declares_a_pydantic_result_model() -> None:
    declared = [stage.result for stage in STAGES]
    assert all(isinstance(kind, type) and issubclass(kind, BaseModel) for kind in declared)
    assert all(issubclass(kind, StageResult) for kind in declared)
    assert tuple(declared) == STAGE_RESULTS and len(set(declared)) == len(STAGES)  # one model per stage


def test_a_stage_without_a_declared_model_is_refused() -> None:
    with pytest.raises(TypeError, match="stage rollout: undeclared must declare a StageResult return type"):
        _ = Stage("rollout", undeclared, (), lambda c: {}).result


def test_the_runner_rejects_a_stage_that_returns_a_dict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match="stage rollout returned dict, not its declared RolloutResult"):
        checked_result(STAGES[0], {"policy": "scripted", "targets": {}})
    monkeypatch.setattr(runner_module, "STAGES", fake_stages(untyped))
    with pytest.raises(TypeError, match="stage rollout returned dict"):
        run_pipeline(demo_config(), tmp_path)
    marker = read_marker(tmp_path / "rollout")
    assert marker is not None and marker.status == "running"  # never marked done


def test_a_cached_result_is_parsed_back_by_its_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "STAGES", fake_stages())
    first = run_pipeline(demo_config(), tmp_path)
    assert [(o.name, o.action) for o in first] == [("rollout", "ran"), ("train", "ran")]
    again = run_pipeline(demo_config(), tmp_path)
    assert [(o.name, o.action) for o in again] == [("rollout", "cached"), ("train", "cached")]
    assert CALLS == ["rollout", "train"]
    assert isinstance(again[1].result, TrainResult) and again[1].result == TrainResult(model="scripted")
    assert [o.result for o in again] == [o.result for o in first]


def test_an_older_shape_of_result_is_run_again_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached result that no longer parses (here the flat adapter dict of earlier versions) is not read with
    another meaning: its stage runs again, resuming the work its folder holds, and its readers follow."""
    monkeypatch.setattr(runner_module, "STAGES", fake_stages())
    run_pipeline(demo_config(), tmp_path)
    marker = read_marker(tmp_path / "train")
    assert marker is not None
    old = {"model": "scripted", "adapters": {"device/x": {"path": "train/device/x", "steps": 2}}}
    write_marker(tmp_path / "train", marker.model_copy(update={"summary": old}))
    outcomes = {o.name: o for o in run_pipeline(demo_config(), tmp_path)}
    assert (outcomes["rollout"].action, outcomes["train"].action) == ("cached", "resumed")
    assert outcomes["train"].result == TrainResult(model="scripted")
    assert (tmp_path / "train" / "out.txt").is_file() and (tmp_path / "train" / MARKER).is_file()


def test_each_stage_key_is_computed_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sections: list[str] = []
    monkeypatch.setattr(runner_module, "STAGES", fake_stages(sections=sections))
    run_pipeline(demo_config(), tmp_path)  # the preflight's look at the cache and the run share the keys
    assert sections == ["rollout", "train"]
    sections.clear()
    run_pipeline(demo_config(), tmp_path)
    assert sections == ["rollout", "train"]
    keys = StageKeys(demo_config())
    stage = runner_module.STAGES[0]
    assert keys.key(stage) == keys.key(stage) and sections == ["rollout", "train", "rollout"]


def test_a_stage_body_is_handed_one_target_at_a_time(tmp_path: Path) -> None:
    lines: list[tuple[str, int | None, int | None]] = []
    config = demo_config()
    ctx = StageContext("analyze", config, tmp_path, tmp_path / "analyze", status=lambda *line: lines.append(line))
    steps = list(ctx.each_target())
    assert [s.name for s in steps] == list(config.targets)
    assert steps[0].folder == tmp_path / "analyze" / steps[0].name
    assert steps[0].input_dir("rollout") == tmp_path / "rollout" / steps[0].name
    steps[0].report("labels", 1, 3)
    assert lines == [(f"{steps[0].name}: labels", 1, 3)]


def test_the_outcome_summary_is_a_deprecated_alias() -> None:
    outcome = StageOutcome("rollout", "ran", RolloutResult(policy="scripted"))
    with pytest.warns(DeprecationWarning, match="StageOutcome.result"):
        assert outcome.summary == {"policy": "scripted", "targets": {}}
