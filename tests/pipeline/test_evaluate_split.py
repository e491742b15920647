"""The evaluate section picks the device target's built-in split, as the rollout section does: a run that rolls
out on the train scenarios can evaluate on the test ones, which the analysis never saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trace_envs.pipeline import EvaluateResult
from trace_envs.pipeline.config import parse_config
from trace_envs.pipeline.runner import run_pipeline
from trace_envs.targets.device.builtin import builtin_pool


def split_config(**evaluate: Any) -> Any:
    data = {
        "targets": ["device"],
        "rollout": {"policy": "oracle", "max_tasks": 2, "split": "train", "concurrency": 1},
        "train": {"model": "tiny"},
        "route": {"enabled": False},
        "evaluate": {"policies": ["oracle"], "max_tasks": 3, "concurrency": 1, **evaluate},
    }
    return parse_config(data, "the test config")


def evaluated_scenarios(out: Path) -> list[str]:
    """The scenario names the evaluate stage played, from its results file."""
    results = json.loads((out / "evaluate" / "device" / "results.json").read_text(encoding="utf-8"))
    (policy,) = results["policies"]
    return [outcome["task_id"] for outcome in policy["outcomes"]]


def test_evaluate_plays_the_split_it_names(tmp_path: Path) -> None:
    outcomes = {o.name: o for o in run_pipeline(split_config(split="test"), tmp_path)}

    evaluated = outcomes["evaluate"].result
    assert isinstance(evaluated, EvaluateResult) and evaluated.targets["device"].target.split == "test"
    test_names = {s.name for s in builtin_pool("test")}
    played = evaluated_scenarios(tmp_path)
    assert len(played) == 3 and set(played) <= test_names, played


def test_by_default_evaluate_plays_every_scenario(tmp_path: Path) -> None:
    outcomes = {o.name: o for o in run_pipeline(split_config(), tmp_path)}

    result = outcomes["evaluate"].result
    assert isinstance(result, EvaluateResult)
    evaluated = result.targets["device"].target
    assert evaluated.split == "all"
    assert evaluated.available == len(builtin_pool("train")) + len(builtin_pool("test"))
