"""The device tools' schemas and signatures equal ToolSandbox's (tool_signatures.json, whitespace-normalised)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_envs.domains.device import AGENT_TOOLSET, ALL_TOOLS, DEVICE, FULL_TOOLSET, TOOL_SPECS

JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _json_type(annotation: str) -> str:
    members = annotation.replace("Union[", "").replace("Optional[", "").replace("]", "").split(",")
    kinds = [m.strip() for m in members if m.strip() not in ("NotGiven", "None")]
    if set(kinds) == {"float", "int"}:
        return "number"
    return JSON_TYPES[kinds[0]]


@pytest.fixture(scope="module")
def signatures(shared_data: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((shared_data / "toolsandbox" / "tool_signatures.json").read_text())
    return {tool["name"]: {**tool, "module": module} for module, tools in data["tools"].items() for tool in tools}


def test_same_34_tools(signatures: dict[str, dict[str, Any]]) -> None:
    assert sorted(signatures) == sorted(t.name for t in ALL_TOOLS)
    assert len(FULL_TOOLSET) == 34
    assert "end_conversation" not in AGENT_TOOLSET and len(AGENT_TOOLSET) == 33
    assert DEVICE.toolset is AGENT_TOOLSET


@pytest.mark.parametrize("name", [t.name for t in ALL_TOOLS])
def test_schema_matches_upstream(name: str, signatures: dict[str, dict[str, Any]]) -> None:
    upstream = signatures[name]
    schema = FULL_TOOLSET.schema(FULL_TOOLSET[name])
    function = schema["function"]
    assert schema["type"] == "function"
    assert function["name"] == name
    assert _norm(function["description"]) == _norm(upstream["description"])
    parameters = function["parameters"]
    assert list(parameters) == ["type", "properties", "required"]
    assert parameters["type"] == "object"
    assert list(parameters["properties"]) == [p["name"] for p in upstream["parameters"]]
    assert parameters["required"] == [p["name"] for p in upstream["parameters"] if p["default"] is None]
    for param in upstream["parameters"]:
        prop = parameters["properties"][param["name"]]
        assert list(prop) == ["type", "description"], "property type comes first"
        assert prop["type"] == _json_type(param["type"]), param
        assert _norm(prop["description"]) == _norm(param["description"])


@pytest.mark.parametrize("name", [t.name for t in ALL_TOOLS])
def test_signature_facts_match_upstream(name: str, signatures: dict[str, dict[str, Any]]) -> None:
    upstream, spec = signatures[name], TOOL_SPECS[name]
    assert spec.module == upstream["module"]
    assert spec.visible_to == ("USER" if "USER" in upstream["decorator"] else "AGENT")
    for param in upstream["parameters"]:
        if param["default"] is not None:
            assert repr(spec.defaults[param["name"]]) == param["default"], param


def test_discovery_order_is_upstreams() -> None:
    expected = (
        "add_contact, modify_contact, remove_contact, search_contacts, get_cellular_service_status, search_messages, "
        "send_message_with_phone_number, convert_currency, get_current_location, get_location_service_status, "
        "get_wifi_status, search_lat_lon, search_location_around_lat_lon, search_stock, search_weather_around_lat_lon, "
        "add_reminder, modify_reminder, remove_reminder, search_reminder, get_low_battery_mode_status, "
        "set_cellular_service_status, set_location_service_status, set_low_battery_mode_status, set_wifi_status, "
        "end_conversation, calculate_lat_lon_distance, datetime_info_to_timestamp, get_current_timestamp, search_holiday, "
        "seconds_to_hours_minutes_seconds, shift_timestamp, timestamp_diff, timestamp_to_datetime_info, unit_conversion"
    )
    assert list(FULL_TOOLSET) == expected.split(", ")


def test_in_block_line_breaks_are_kept() -> None:
    """Exactly the ten tools the reference names keep line breaks inside a description block."""
    assert sorted(n for n in FULL_TOOLSET if "\n" in FULL_TOOLSET[n].description) == [
        "add_contact", "end_conversation", "search_contacts", "search_location_around_lat_lon", "search_messages",
        "search_reminder", "search_stock", "search_weather_around_lat_lon", "timestamp_diff", "timestamp_to_datetime_info",
    ]  # fmt: skip
    assert "\n" in FULL_TOOLSET["timestamp_diff"].description
    for name in ("search_stock", "search_location_around_lat_lon", "search_weather_around_lat_lon"):
        assert "\n    - " in FULL_TOOLSET[name].description, name
