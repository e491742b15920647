"""The ToolSandbox-style device target: scenarios, milestone evaluation, ``trace/device-v0`` and metrics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trace_envs.targets import lazy_exports

if TYPE_CHECKING:
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

__getattr__ = lazy_exports(
    __name__,
    {
        "builtin_scenarios": "builtin",
        "DeviceEnv": "env",
        "DeviceKnobs": "env",
        "scenario_task": "env",
        "generate_scenario": "generator",
        "DeviceMetrics": "metrics",
        "ScenarioScore": "metrics",
        "mean_similarity": "metrics",
        "perfect_count": "metrics",
        "score_scenarios": "metrics",
        "summarize": "metrics",
        "ColumnMeasure": "milestones",
        "Evaluation": "milestones",
        "EvaluationResult": "milestones",
        "Milestone": "milestones",
        "SandboxMessage": "milestones",
        "SnapshotConstraint": "milestones",
        "Trajectory": "milestones",
        "evaluate": "milestones",
        "DeviceScenario": "scenario",
        "dump_scenarios": "scenario",
        "load_scenarios": "scenario",
    },
)
"""Each name is imported from its submodule on first use (importing this package stays cheap)."""

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
