"""Retail tool schemas equal tau2's (tool_signatures.json, whitespace-normalised) and follow section 1.5."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_envs.domains.retail import RETAIL

TYPES = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "List[str]": {"type": "array", "items": {"type": "string"}},
}


@pytest.fixture(scope="module")
def signatures(shared_data: Path) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((shared_data / "tau2" / "tool_signatures.json").read_text())["retail"]
    return loaded


def normalise(text: str) -> str:
    return " ".join(text.split())


def test_names_and_order(signatures: list[dict[str, Any]]) -> None:
    assert list(RETAIL.toolset) == [s["name"] for s in signatures]


def test_kinds_match_decorators(signatures: list[dict[str, Any]]) -> None:
    for sig in signatures:
        kind = sig["decorator"].split("ToolType.")[1].rstrip(")").lower()
        assert RETAIL.toolset[sig["name"]].kind == kind, sig["name"]


def test_schemas_match_signatures(signatures: list[dict[str, Any]]) -> None:
    for sig, schema in zip(signatures, RETAIL.toolset.schemas(), strict=True):
        function = schema["function"]
        assert schema["type"] == "function"
        assert function["name"] == sig["name"]
        assert normalise(function["description"]) == normalise(sig["description"]), sig["name"]
        params = function["parameters"]
        assert params["title"] == "parameters" and params["type"] == "object"
        assert list(params["properties"]) == [p["name"] for p in sig["parameters"]]
        if sig["parameters"]:
            assert params["required"] == [p["name"] for p in sig["parameters"]]
        else:
            assert "required" not in params
        for p in sig["parameters"]:
            prop = params["properties"][p["name"]]
            assert normalise(prop["description"]) == normalise(p["description"]), (sig["name"], p["name"])
            assert prop["title"] == " ".join(w.capitalize() for w in p["name"].split("_"))
            assert {k: v for k, v in prop.items() if k not in ("description", "title")} == TYPES[p["type"]]
            assert next(iter(prop)) == "description"


def test_real_line_breaks_where_the_reference_records_them() -> None:
    descriptions = {s["function"]["name"]: s["function"]["description"] for s in RETAIL.toolset.schemas()}
    assert descriptions["transfer_to_human_agents"] == (
        "Transfer the user to a human agent, with a summary of the user's issue.\n\nOnly transfer if\n"
        " -  the user explicitly asks for a human agent\n"
        " -  given the policy and the available tools, you cannot solve the user's issue."
    )
    assert descriptions["cancel_pending_order"].startswith(
        "Cancel a pending order. If the order is already processed or delivered,\n\nit cannot be cancelled."
    )
    assert descriptions["list_all_product_types"] == (
        "List the name and product id of all product types.\n\nEach product type has a variety of different items "
        "with unique item ids and options.\nThere are only 50 product types in the store."
    )
    assert descriptions["find_user_id_by_name_zip"].count("\n") == 3
    exchange = RETAIL.toolset.schemas()[2]["function"]["parameters"]["properties"]
    assert exchange["payment_method_id"]["description"].count("\n") == 2
    assert exchange["new_item_ids"]["description"].count("\n") == 2
