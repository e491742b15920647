"""Milestone/minefield evaluation on hand-built trajectories (ToolSandbox's section-7 semantics)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.device import FULL_TOOLSET, build_base_world, call_code, dump_world
from trace_envs.targets.device.builders import added, attempted, said, settings_are, tool_trace
from trace_envs.targets.device.milestones import (
    Evaluation,
    Milestone,
    SandboxMessage,
    SnapshotConstraint,
    Trajectory,
    evaluate,
)
from trace_envs.targets.device.rouge import rouge_l


class Play:
    """Builds a trajectory by hand: tool calls run on a real world, messages are appended as given."""

    def __init__(self, base: str = "base"):
        self.state = build_base_world(base)
        tables = dump_world(self.state)
        self.messages = [
            SandboxMessage(sender="SYSTEM", recipient="AGENT", content="system prompt"),
            SandboxMessage(sender="SYSTEM", recipient="USER", content="task"),
            SandboxMessage(sender="USER", recipient="AGENT", content="please help"),
        ]
        self.snapshots: list[dict[str, Any]] = [tables, tables, tables]

    def tool(self, name: str, /, **arguments: Any) -> Play:
        call = ToolCall(name=name, arguments=arguments, id="c")
        self.messages.append(
            SandboxMessage(sender="AGENT", recipient="EXECUTION_ENVIRONMENT", content=call_code(call, "c"))
        )
        self.snapshots.append(self.snapshots[-1])
        outcome = FULL_TOOLSET.execute(self.state, call)
        self.messages.append(
            SandboxMessage(
                sender="EXECUTION_ENVIRONMENT",
                recipient="AGENT",
                content=outcome.result.content,
                tool_call_exception=outcome.exception,
                tool_trace=[outcome.trace] if outcome.trace else None,
            )
        )
        self.snapshots.append(dump_world(self.state))
        return self

    def agent(self, text: str) -> Play:
        self.messages.append(SandboxMessage(sender="AGENT", recipient="USER", content=text))
        self.snapshots.append(self.snapshots[-1])
        return self

    def trajectory(self) -> Trajectory:
        return Trajectory(messages=self.messages, snapshots=self.snapshots, first_user=2)


def message(text: str) -> Milestone:
    """A plain ToolSandbox message milestone (ROUGE-L on content)."""
    return Milestone(
        snapshot_constraints=[
            SnapshotConstraint(
                database_namespace="SANDBOX",
                target_dataframe=[{"sender": "AGENT", "recipient": "USER", "content": text}],
            )
        ]
    )


WIFI_OFF = Evaluation(milestones=[settings_are(wifi=False), message("Wifi is turned off")])


def score(evaluation: Evaluation, play: Play) -> float:
    return evaluate(evaluation, play.trajectory()).similarity


def test_all_met_in_order_is_one() -> None:
    assert score(WIFI_OFF, Play().tool("set_wifi_status", on=False).agent("Wifi is turned off")) == 1.0


def test_none_met_is_zero() -> None:
    assert score(WIFI_OFF, Play().agent("")) == 0.0
    assert score(WIFI_OFF, Play()) == 0.0


def test_partial_is_strictly_between_and_matches_upstream_examples() -> None:
    assert rouge_l("Wifi is turned off", "I have turned off your wifi.") == pytest.approx(0.4)
    paraphrase = score(WIFI_OFF, Play().tool("set_wifi_status", on=False).agent("I have turned off your wifi."))
    assert paraphrase == pytest.approx((1 + 0.4 ** (1 / 3)) / 2)
    assert round(paraphrase, 3) == 0.868
    assert score(WIFI_OFF, Play().tool("set_wifi_status", on=False).agent("Done!")) == 0.5
    assert score(WIFI_OFF, Play().agent("Wifi is turned off")) == 0.5


def test_order_is_enforced() -> None:
    """The message milestone must come at or after the settings milestone."""
    early = score(WIFI_OFF, Play().agent("Wifi is turned off").tool("set_wifi_status", on=False))
    assert early == 0.5
    swapped = Evaluation(milestones=[message("Wifi is turned off"), settings_are(wifi=False)])
    assert score(swapped, Play().agent("Wifi is turned off").tool("set_wifi_status", on=False)) == 1.0


def test_dag_allows_either_order_of_independent_milestones() -> None:
    evaluation = Evaluation(
        milestones=[
            tool_trace("get_wifi_status"),
            tool_trace("get_cellular_service_status"),
            message("Both are on"),
        ],
        milestone_edges=[(0, 2), (1, 2)],
    )
    one = Play().tool("get_wifi_status").tool("get_cellular_service_status").agent("Both are on")
    other = Play().tool("get_cellular_service_status").tool("get_wifi_status").agent("Both are on")
    assert score(evaluation, one) == score(evaluation, other) == 1.0
    chain = Evaluation(milestones=evaluation.milestones)  # default chain 0 -> 1 -> 2
    assert 0 < score(chain, other) < 1.0


def test_minefield_zeroes_even_a_perfect_run() -> None:
    evaluation = Evaluation(
        milestones=[settings_are(wifi=False), message("Wifi is turned off")],
        minefields=[attempted("set_cellular_service_status")],
    )
    clean = Play().tool("set_wifi_status", on=False).agent("Wifi is turned off")
    assert score(evaluation, clean) == 1.0
    mined = (
        Play()
        .tool("set_wifi_status", on=False)
        .tool("set_cellular_service_status", on="bad")
        .agent("Wifi is turned off")
    )
    result = evaluate(evaluation, mined.trajectory())
    assert result.milestone_similarity == 1.0 and result.minefield_similarity > 0 and result.similarity == 0.0


def test_no_milestones_scores_one_unless_a_minefield_fires() -> None:
    evaluation = Evaluation(minefields=[attempted("search_lat_lon")])
    assert score(evaluation, Play().agent("I can't do that.")) == 1.0
    assert score(evaluation, Play().tool("search_lat_lon", latitude=1.0, longitude=1.0)) == 0.0


def test_guardrails_penalise_side_effects_between_milestones() -> None:
    evaluation2 = Evaluation(
        milestones=[
            tool_trace("get_wifi_status"),
            added("MESSAGING", {"recipient_phone_number": "+12453344098", "content": "hello"}, reference=0),
        ]
    )
    ok = (
        Play()
        .tool("get_wifi_status")
        .tool("send_message_with_phone_number", phone_number="+12453344098", content="hello")
    )
    assert score(evaluation2, ok) == 1.0
    noisy = (
        Play()
        .tool("get_wifi_status")
        .tool("add_contact", name="Extra", phone_number="+15550001111")
        .tool("send_message_with_phone_number", phone_number="+12453344098", content="hello")
    )
    assert score(evaluation2, noisy) == 0.5  # the CONTACT guardrail against milestone 0 fails


def test_addition_and_tool_trace_measures() -> None:
    evaluation = Evaluation(milestones=[added("REMINDER", {"content": "Buy milk", "reminder_timestamp": 1774600000.0})])
    assert score(evaluation, Play().tool("add_reminder", content="Buy milk", reminder_timestamp=1774600000.0)) == 1.0
    near = score(evaluation, Play().tool("add_reminder", content="Buy some milk", reminder_timestamp=1774600000.5))
    assert 0 < near < 1
    wrong_time = score(evaluation, Play().tool("add_reminder", content="Buy milk", reminder_timestamp=1774700000.0))
    assert wrong_time == 0.0
    traced = Evaluation(milestones=[tool_trace("shift_timestamp", days=1)])
    assert score(traced, Play().tool("shift_timestamp", timestamp=1774511873.0, days=1)) == 1.0
    assert score(traced, Play().tool("shift_timestamp", timestamp=1774511873.0, days=2)) == 0.0


def test_tool_trace_dependant_constraint() -> None:
    """timestamp_diff must be called with the value get_current_timestamp returned earlier."""
    dependant = SnapshotConstraint(
        database_namespace="SANDBOX",
        snapshot_constraint="tool_trace_dependant",
        reference_milestone_node_index=0,
        fill_to="tool_trace",
        extractor="result_to_timestamp_0",
        target_dataframe=[
            {"sender": "EXECUTION_ENVIRONMENT", "tool_trace": {"tool_name": "timestamp_diff", "arguments": {}}}
        ],
    )
    evaluation = Evaluation(
        milestones=[tool_trace("get_current_timestamp"), Milestone(snapshot_constraints=[dependant])]
    )
    now = 1774511873.0
    good = Play().tool("get_current_timestamp").tool("timestamp_diff", timestamp_0=now, timestamp_1=now + 5)
    bad = Play().tool("get_current_timestamp").tool("timestamp_diff", timestamp_0=now - 1, timestamp_1=now + 5)
    assert score(evaluation, good) == 1.0
    assert score(evaluation, bad) == 0.5


def test_said_needs_the_key_fact() -> None:
    evaluation = Evaluation(milestones=[said("Christmas Day is 273 days away.", "273 days")])
    assert score(evaluation, Play().agent("Christmas Day is 273 days away.")) == 1.0
    assert score(evaluation, Play().agent("Christmas Day is 272 days away.")) == 0.0
    partial = score(evaluation, Play().agent("Only 273 days to go!"))
    assert 0 < partial < 1 and math.isfinite(partial)


def test_invalid_evaluations_name_the_problem() -> None:
    with pytest.raises(ValueError, match="cycle"):
        Evaluation(milestones=[message("a"), message("b")], milestone_edges=[(0, 1), (1, 0)])
    with pytest.raises(ValueError, match="reference_milestone_node_index"):
        SnapshotConstraint(database_namespace="CONTACT", snapshot_constraint="addition", target_dataframe=[{}])
    with pytest.raises(ValueError, match="not its ancestor"):
        Evaluation(milestones=[message("a"), added("CONTACT", {"name": "x"}, reference=1)], milestone_edges=[])


def test_said_key_ignores_case_and_punctuation() -> None:
    evaluation = Evaluation(milestones=[said("Your wifi is now on.", "wifi")])
    assert 0 < score(evaluation, Play().agent("Your Wi-Fi is on again.")) < 1
    assert score(evaluation, Play().agent("Your network is on again.")) == 0.0
