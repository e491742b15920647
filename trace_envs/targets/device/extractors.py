"""Tool-trace extractors of ``tool_trace_dependant`` constraints: values taken from an earlier call's trace.

An extractor reads one tool trace (``{"tool_name", "arguments", "result"}``) and returns candidate value
dicts that fill the constraint's target (tool-call arguments or a message's ``str.format`` fields). Every
extractor upstream ToolSandbox's scenarios use is here under its upstream name without ``_extractor``
(the upstream names are accepted too), plus two of ours. As upstream, an extractor that meets a result of
the wrong shape (``KeyError``, ``IndexError``, ``TypeError``, ``ValueError``) yields no candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

Trace = dict[str, Any]

ExtractorName = Literal[
    "result_to_timestamp_0",
    "result_to_timestamp_1",
    "result_to_timestamp",
    "result_to_reminder_timestamp_lowerbound",
    "days",
    "lat_lon",
    "current_temperature",
    "min_temperature_amount",
    "search_weather_around_lat_lon_temperature",
    "result_to_temperature",
    "min_temperature",
    "result",
]


def precisions(value: float) -> list[str]:
    """A number as a reply may write it: 0 to 3 decimals (upstream's ``default_value_normalization``)."""
    return [f"{value:.0f}", f"{value:.1f}", f"{value:.2f}", f"{value:.3f}"]


EXTRACTORS: dict[str, Callable[[Trace], list[dict[str, Any]]]] = {
    # a timestamp result as the first / second argument of timestamp_diff, or as a search lower bound
    "result_to_timestamp_0": lambda trace: [{"timestamp_0": float(trace["result"])}],
    "result_to_timestamp_1": lambda trace: [{"timestamp_1": float(trace["result"])}],
    "result_to_timestamp": lambda trace: [{"timestamp": float(trace["result"])}],  # ours: shift_timestamp etc.
    "result_to_reminder_timestamp_lowerbound": lambda trace: [
        {"reminder_timestamp_lowerbound": float(trace["result"])}
    ],
    "days": lambda trace: [{"days": int(trace["result"]["days"])}],  # timestamp_diff's days, for a reply
    "lat_lon": lambda trace: [{key: trace["result"][key] for key in ("latitude", "longitude")}],
    # a weather report's temperature as unit_conversion's amount
    "current_temperature": lambda trace: [{"amount": float(trace["result"]["current_temperature"])}],
    "min_temperature_amount": lambda trace: [{"amount": float(trace["result"]["min_temperature"])}],
    # a temperature as a reply writes it, for content templates such as "It is {temperature} degrees"
    "search_weather_around_lat_lon_temperature": lambda trace: [
        {"temperature": text} for text in precisions(float(trace["result"]["current_temperature"]))
    ],
    "result_to_temperature": lambda trace: [{"temperature": text} for text in precisions(float(trace["result"]))],
    "min_temperature": lambda trace: [{"min_temperature": text} for text in precisions(float(trace["result"]))],
    "result": lambda trace: [{"result": trace["result"]}],  # ours: the raw result
}

UPSTREAM_NAMES: dict[str, str] = {
    "result_to_timestamp0_extractor": "result_to_timestamp_0",
    "result_to_timestamp1_extractor": "result_to_timestamp_1",
    "result_to_reminder_timestamp_lowerbound_extractor": "result_to_reminder_timestamp_lowerbound",
    "days_extractor": "days",
    "lat_lon_dict_extractor": "lat_lon",
    "current_temperature_extractor": "current_temperature",
    "min_temperature_amount_extractor": "min_temperature_amount",
    "search_weather_around_lat_lon_temperature_extractor": "search_weather_around_lat_lon_temperature",
    "result_to_temperature_extractor": "result_to_temperature",
    "min_temperature_extractor": "min_temperature",
}
"""Upstream's function names (``tool_sandbox.common.tool_trace_extractors``) → ours."""


def extract(name: str, trace: Trace) -> list[dict[str, Any]]:
    """Candidate values from one trace; none when the trace's result does not have the extractor's shape."""
    try:
        return EXTRACTORS[name](trace)
    except (KeyError, IndexError, TypeError, ValueError):
        return []
