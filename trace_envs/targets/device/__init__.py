"""The ToolSandbox-style device target: scenarios, milestone evaluation, ``trace/device-v0`` and metrics."""

from __future__ import annotations

from .builtin import builtin_scenarios
from .env import DeviceEnv, DeviceKnobs, scenario_task
from .generator import generate_scenario
from .metrics import DeviceMetrics, ScenarioScore, mean_similarity, perfect_count, score_scenarios, summarize
from .milestones import (
    ColumnMeasure,
    Evaluation,
    EvaluationResult,
    Milestone,
    SandboxMessage,
    SnapshotConstraint,
    Trajectory,
    evaluate,
)
from .scenario import DeviceScenario, dump_scenarios, load_scenarios

__all__ = [
    "ColumnMeasure",
    "DeviceEnv",
    "DeviceKnobs",
    "DeviceMetrics",
    "DeviceScenario",
    "Evaluation",
    "EvaluationResult",
    "Milestone",
    "SandboxMessage",
    "ScenarioScore",
    "SnapshotConstraint",
    "Trajectory",
    "builtin_scenarios",
    "dump_scenarios",
    "evaluate",
    "generate_scenario",
    "load_scenarios",
    "mean_similarity",
    "perfect_count",
    "scenario_task",
    "score_scenarios",
    "summarize",
]
