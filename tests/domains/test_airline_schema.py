"""Airline tool schemas equal tau2-bench's (shared tool_signatures.json, modulo its whitespace normalisation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_envs.domains.airline import AIRLINE

# Python annotation (as tool_signatures.json spells it) -> the JSON schema of the property, minus texts.
TYPE_SCHEMAS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "FlightType": {"enum": ["round_trip", "one_way"], "type": "string"},
    "CabinClass": {"enum": ["business", "economy", "basic_economy"], "type": "string"},
    "Insurance": {"enum": ["yes", "no"], "type": "string"},
    "List[FlightInfo | dict]": {
        "items": {"anyOf": [{"$ref": "#/$defs/FlightInfo"}, {"additionalProperties": True, "type": "object"}]},
        "type": "array",
    },
    "List[Passenger | dict]": {
        "items": {"anyOf": [{"$ref": "#/$defs/Passenger"}, {"additionalProperties": True, "type": "object"}]},
        "type": "array",
    },
    "List[Payment | dict]": {
        "items": {"anyOf": [{"$ref": "#/$defs/Payment"}, {"additionalProperties": True, "type": "object"}]},
        "type": "array",
    },
}

# The argument models' $defs (field descriptions are upstream's Field descriptions).
DEFS: dict[str, dict[str, Any]] = {
    "FlightInfo": {
        "properties": {
            "flight_number": {
                "description": "Flight number, such as 'HAT001'.",
                "title": "Flight Number",
                "type": "string",
            },
            "date": {
                "description": "The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.",
                "title": "Date",
                "type": "string",
            },
        },
        "required": ["flight_number", "date"],
        "title": "FlightInfo",
        "type": "object",
    },
    "Passenger": {
        "properties": {
            "first_name": {"description": "Passenger's first name", "title": "First Name", "type": "string"},
            "last_name": {"description": "Passenger's last name", "title": "Last Name", "type": "string"},
            "dob": {"description": "Date of birth in YYYY-MM-DD format", "title": "Dob", "type": "string"},
        },
        "required": ["first_name", "last_name", "dob"],
        "title": "Passenger",
        "type": "object",
    },
    "Payment": {
        "properties": {
            "payment_id": {"description": "Unique identifier for the payment", "title": "Payment Id", "type": "string"},
            "amount": {"description": "Payment amount in dollars", "title": "Amount", "type": "integer"},
        },
        "required": ["payment_id", "amount"],
        "title": "Payment",
        "type": "object",
    },
}

TRANSFER_DESCRIPTION = (
    "Transfer the user to a human agent, with a summary of the user's issue.\n\n"
    "Only transfer if\n"
    " -  the user explicitly asks for a human agent\n"
    " -  given the policy and the available tools, you cannot solve the user's issue."
)


def normalise(text: str) -> str:
    """tool_signatures.json's normalisation: line breaks (with the indentation around them) become one space."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def title(name: str) -> str:
    return " ".join(word.capitalize() for word in name.split("_"))


def property_schema(param: dict[str, Any]) -> dict[str, Any]:
    """A property as pydantic emits it: description, enum/items, title, type (in that key order)."""
    typed = TYPE_SCHEMAS[param["type"]]
    middle = {key: value for key, value in typed.items() if key != "type"}
    return {"description": param["description"], **middle, "title": title(param["name"]), "type": typed["type"]}


@pytest.fixture(scope="module")
def signatures(shared_data: Path) -> list[dict[str, Any]]:
    data = json.loads((shared_data / "tau2" / "tool_signatures.json").read_text(encoding="utf-8"))
    airline: list[dict[str, Any]] = data["airline"]
    return airline


def test_tool_names_in_upstream_order(signatures: list[dict[str, Any]]) -> None:
    assert list(AIRLINE.toolset) == [sig["name"] for sig in signatures]


def test_each_schema_equals_the_upstream_signature(signatures: list[dict[str, Any]]) -> None:
    schemas = {schema["function"]["name"]: schema for schema in AIRLINE.toolset.schemas()}
    for sig in signatures:
        schema = schemas[sig["name"]]
        assert schema["type"] == "function"
        function = schema["function"]
        assert normalise(function["description"]) == sig["description"], sig["name"]
        params = function["parameters"]
        expected_properties = {p["name"]: property_schema(p) for p in sig["parameters"]}
        assert params["properties"] == expected_properties, sig["name"]
        # Key order inside each property, as pydantic emits it: description, enum/items, title, type.
        for name, prop in params["properties"].items():
            assert list(prop) == list(expected_properties[name]), (sig["name"], name)
        assert list(params["properties"]) == [p["name"] for p in sig["parameters"]]
        assert params["title"] == "parameters"
        assert params["type"] == "object"
        required = [p["name"] for p in sig["parameters"] if p["default"] is None]
        if required:
            assert params["required"] == required
        else:
            assert "required" not in params
        wanted_defs = {ref: DEFS[ref] for ref in DEFS if any(ref in p["type"] for p in sig["parameters"])}
        assert params.get("$defs", {}) == wanted_defs, sig["name"]
        expected_keys = (["$defs"] if wanted_defs else []) + ["properties"] + (["required"] if required else [])
        assert list(params) == [*expected_keys, "title", "type"]


def test_multi_line_description_keeps_its_line_breaks() -> None:
    assert AIRLINE.toolset["transfer_to_human_agents"].description == TRANSFER_DESCRIPTION


def test_schemas_are_json_serialisable() -> None:
    text = json.dumps(AIRLINE.toolset.schemas())
    assert json.loads(text) == AIRLINE.toolset.schemas()
