"""Small constructors for milestones/minefields and a planner that writes reference solutions.

The planner runs each reference call on a working copy of the world as it is written, so the
values a scenario states (timestamps, ids, converted amounts) are exactly what the tools return.
"""

from __future__ import annotations

import json
from typing import Any

from trace_envs.core import ToolCall
from trace_envs.domains.device import FULL_TOOLSET, DeviceState, load_world

from .milestones import ColumnMeasure, Milestone, Namespace, SnapshotConstraint

TIMESTAMP_ATOL = 1.0
"""Seconds of tolerance on timestamps written by tools (ours are exact; this absorbs float noise)."""


def tool_trace(tool_name: str, atol: dict[str, float] | None = None, **arguments: Any) -> Milestone:
    """The execution environment answered a successful call of ``tool_name`` with these arguments."""
    measures = {"tool_trace": ColumnMeasure(name="tool_trace", atol=atol or {})}
    target = {
        "sender": "EXECUTION_ENVIRONMENT",
        "recipient": "AGENT",
        "tool_trace": {"tool_name": tool_name, "arguments": arguments},
    }
    return Milestone(
        snapshot_constraints=[
            SnapshotConstraint(
                database_namespace="SANDBOX", target_dataframe=[target], column_similarity_measure=measures
            )
        ]
    )


def settings_are(**fields: Any) -> Milestone:
    """The SETTING row has these values."""
    return Milestone(snapshot_constraints=[SnapshotConstraint(database_namespace="SETTING", target_dataframe=[fields])])


def _rows_changed(kind: str, namespace: Namespace, rows: list[dict[str, Any]], reference: int) -> Milestone:
    measures: dict[str, ColumnMeasure] = {}
    for column in ("reminder_timestamp", "creation_timestamp"):
        if any(column in row for row in rows):
            measures[column] = ColumnMeasure(name="close", atol={column: TIMESTAMP_ATOL})
    return Milestone(
        snapshot_constraints=[
            SnapshotConstraint(
                database_namespace=namespace,
                snapshot_constraint=kind,  # type: ignore[arg-type]
                target_dataframe=rows,
                reference_milestone_node_index=reference,
                column_similarity_measure=measures,
            )
        ]
    )


def added(namespace: Namespace, *rows: dict[str, Any], reference: int = -1) -> Milestone:
    """Exactly these rows were added to ``namespace`` since the reference snapshot."""
    return _rows_changed("addition", namespace, list(rows), reference)


def removed(namespace: Namespace, *rows: dict[str, Any], reference: int = -1) -> Milestone:
    """Exactly these rows were removed from ``namespace`` since the reference snapshot."""
    return _rows_changed("removal", namespace, list(rows), reference)


def updated(namespace: Namespace, *rows: dict[str, Any], reference: int = -1) -> Milestone:
    """The rows that differ from the reference snapshot are these (as they are now)."""
    return _rows_changed("update", namespace, list(rows), reference)


def said(text: str, key: str) -> Milestone:
    """The agent told the user ``text`` (ROUGE-L) and the message contains the key fact ``key`` (compared
    case-insensitively on letters and digits only, so "Wi-Fi" counts as "wifi" and "273 days" as "273 days")."""
    if key not in text:
        raise ValueError(f"the key fact {key!r} must appear in the reference message {text!r}")
    return Milestone(
        snapshot_constraints=[
            SnapshotConstraint(
                database_namespace="SANDBOX",
                target_dataframe=[{"sender": "AGENT", "recipient": "USER", "content": text}],
            ),
            SnapshotConstraint(
                database_namespace="SANDBOX",
                target_dataframe=[{"content": key}],
                column_similarity_measure={"content": ColumnMeasure(name="contains", normalize=True)},
            ),
        ]
    )


def attempted(tool_name: str) -> Milestone:
    """(Minefield) the agent sent a tool call whose code mentions ``tool_name`` (whatever its result)."""
    return Milestone(
        snapshot_constraints=[
            SnapshotConstraint(
                database_namespace="SANDBOX",
                target_dataframe=[
                    {"sender": "AGENT", "recipient": "EXECUTION_ENVIRONMENT", "content": f"{tool_name}("}
                ],
                column_similarity_measure={"content": ColumnMeasure(name="contains")},
            )
        ]
    )


class Planner:
    """Writes a reference solution by running it: ``call`` executes on a working copy of the world."""

    def __init__(self, world: DeviceState | dict[str, Any]):
        data = world.model_dump(mode="json") if isinstance(world, DeviceState) else world
        self.initial: dict[str, Any] = json.loads(json.dumps(data))
        self.state = load_world(self.initial)
        self.steps: list[ToolCall | str] = []

    def call(self, name: str, /, expect_error: str | None = None, **arguments: Any) -> Any:
        """Run a call; ``expect_error`` (an exception-line prefix) marks a call that must fail."""
        call = ToolCall(name=name, arguments=arguments)
        outcome = FULL_TOOLSET.execute(self.state, call)
        if expect_error is not None:
            if not outcome.error or not outcome.result.content.startswith(expect_error):
                raise AssertionError(
                    f"{name}{arguments} should fail with {expect_error!r}, got {outcome.result.content!r}"
                )
        elif outcome.error:
            raise AssertionError(f"reference call {name}{arguments} failed: {outcome.result.content}")
        self.steps.append(call)
        return outcome.value

    def say(self, text: str) -> str:
        self.steps.append(text)
        return text
