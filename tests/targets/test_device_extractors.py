"""Tool-trace extractors: every one upstream's scenarios use, as data, scored on played trajectories."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from tests.targets.test_device_milestones import Play, score
from trace_envs.targets.device.builders import tool_trace
from trace_envs.targets.device.extractors import EXTRACTORS, UPSTREAM_NAMES, ExtractorName, extract
from trace_envs.targets.device.milestones import Evaluation, Milestone, SnapshotConstraint

NOW = 1774511873.0


def dependant(reference: int, extractor: str, fill_to: str, target: dict[str, Any]) -> Milestone:
    """A tool_trace_dependant milestone, built from JSON-like data as a scenario file would give it."""
    data = {
        "database_namespace": "SANDBOX",
        "snapshot_constraint": "tool_trace_dependant",
        "reference_milestone_node_index": reference,
        "fill_to": fill_to,
        "extractor": extractor,
        "target_dataframe": [target],
    }
    return Milestone(snapshot_constraints=[SnapshotConstraint.model_validate(json.loads(json.dumps(data)))])


def called(tool_name: str, **arguments: Any) -> dict[str, Any]:
    return {"sender": "EXECUTION_ENVIRONMENT", "tool_trace": {"tool_name": tool_name, "arguments": arguments}}


def replied(text: str) -> dict[str, Any]:
    return {"sender": "AGENT", "recipient": "USER", "content": text}


def test_every_upstream_extractor_is_available_under_both_names() -> None:
    assert set(get_args(ExtractorName)) == set(EXTRACTORS)
    assert len(UPSTREAM_NAMES) == 10 and set(UPSTREAM_NAMES.values()) <= set(EXTRACTORS)
    for upstream, ours in UPSTREAM_NAMES.items():
        assert dependant(0, upstream, "content", replied("x")).snapshot_constraints[0].extractor == ours
    with pytest.raises(ValueError, match="extractor"):
        dependant(0, "no_such_extractor", "content", replied("x"))


def test_extractors_follow_upstreams_conversions_and_skip_wrong_shapes() -> None:
    assert extract("result_to_timestamp_0", {"result": "12"}) == [{"timestamp_0": 12.0}]  # float(result)
    assert extract("result_to_timestamp_0", {"result": "soon"}) == []
    assert extract("result_to_timestamp_0", {"result": None}) == []
    assert extract("days", {"result": {"days": 3, "seconds": 5}}) == [{"days": 3}]
    assert extract("days", {"result": [3]}) == []
    assert extract("lat_lon", {"result": {"latitude": 1.5}}) == []
    assert extract("result_to_temperature", {"result": 74.30000000000001}) == [
        {"temperature": "74"},
        {"temperature": "74.3"},
        {"temperature": "74.30"},
        {"temperature": "74.300"},
    ]


def test_reminder_timestamp_lowerbound_comes_from_the_current_timestamp() -> None:
    evaluation = Evaluation(
        milestones=[
            tool_trace("get_current_timestamp"),
            dependant(0, "result_to_reminder_timestamp_lowerbound_extractor", "tool_trace", called("search_reminder")),
        ]
    )
    now = Play().tool("get_current_timestamp")
    assert score(evaluation, now.tool("search_reminder", reminder_timestamp_lowerbound=NOW)) == 1.0
    later = Play().tool("get_current_timestamp").tool("search_reminder", reminder_timestamp_lowerbound=NOW + 60)
    assert score(evaluation, later) == 0.5


def test_temperature_flows_from_the_weather_to_unit_conversion_to_the_reply() -> None:
    """upstream's find_temperature_f_with_location shape: weather → convert its temperature → say it."""
    evaluation = Evaluation(
        milestones=[
            tool_trace("search_weather_around_lat_lon"),
            dependant(
                0, "current_temperature_extractor", "tool_trace", called("unit_conversion", to_unit="fahrenheit")
            ),
            dependant(1, "result_to_temperature_extractor", "content", replied("It is {temperature} °F outside.")),
        ]
    )
    play = Play().tool("search_weather_around_lat_lon")
    celsius = json.loads(play.messages[-1].tool_trace[0])["result"]["current_temperature"]  # type: ignore[index]
    play.tool("unit_conversion", amount=celsius, from_unit="celsius", to_unit="fahrenheit")
    fahrenheit = json.loads(play.messages[-1].tool_trace[0])["result"]  # type: ignore[index]
    assert score(evaluation, play.agent(f"It is {fahrenheit:.1f} °F outside.")) == 1.0

    wrong_amount = Play().tool("search_weather_around_lat_lon")
    wrong_amount.tool("unit_conversion", amount=celsius + 1, from_unit="celsius", to_unit="fahrenheit")
    assert score(evaluation, wrong_amount.agent(f"It is {fahrenheit:.1f} °F outside.")) < 1.0


def test_min_temperature_and_the_weather_temperature_extractors() -> None:
    evaluation = Evaluation(
        milestones=[
            tool_trace("search_weather_around_lat_lon", days=1),
            dependant(0, "min_temperature_amount_extractor", "tool_trace", called("unit_conversion")),
            dependant(1, "min_temperature_extractor", "content", replied("The low is {min_temperature} degrees.")),
        ]
    )
    play = Play().tool("search_weather_around_lat_lon", days=1)
    low = json.loads(play.messages[-1].tool_trace[0])["result"]["min_temperature"]  # type: ignore[index]
    play.tool("unit_conversion", amount=low, from_unit="celsius", to_unit="fahrenheit")
    converted = json.loads(play.messages[-1].tool_trace[0])["result"]  # type: ignore[index]
    assert score(evaluation, play.agent(f"The low is {converted:.0f} degrees.")) == 1.0

    said_now = Evaluation(
        milestones=[
            tool_trace("search_weather_around_lat_lon"),
            dependant(0, "search_weather_around_lat_lon_temperature_extractor", "content", replied("{temperature} C")),
        ]
    )
    weather = Play().tool("search_weather_around_lat_lon")
    current = json.loads(weather.messages[-1].tool_trace[0])["result"]["current_temperature"]  # type: ignore[index]
    assert score(said_now, weather.agent(f"{current:.2f} C")) == 1.0


def test_a_content_field_the_extractor_does_not_fill_scores_zero() -> None:
    evaluation = Evaluation(
        milestones=[
            tool_trace("get_current_timestamp"),
            dependant(0, "result_to_timestamp_0", "content", replied("It is {temperature} now.")),
        ]
    )
    assert score(evaluation, Play().tool("get_current_timestamp").agent("It is 5 now.")) == 0.5
