"""Hypothesis strategies for agent actions: free text, well-formed and malformed tool calls."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

_JSON_SCALARS = (
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False) | st.text(max_size=20)
)
json_values = st.recursive(
    _JSON_SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
"""Arbitrary JSON-compatible values."""


def tool_call_actions(tool_schemas: list[dict[str, Any]]) -> st.SearchStrategy[str]:
    """Tool calls in every accepted syntax, with real tool names and argument names but any values."""
    names = [t["function"]["name"] for t in tool_schemas] or ["missing_tool"]

    @st.composite
    def build(draw: st.DrawFn) -> str:
        name = draw(st.sampled_from([*names, "not_a_tool"]))
        schema: dict[str, Any] = next((t["function"] for t in tool_schemas if t["function"]["name"] == name), {})
        known = list(schema.get("parameters", {}).get("properties", {}))
        keys = draw(st.lists(st.sampled_from([*known, "unexpected_arg"]), unique=True, max_size=len(known) + 1))
        call = {"name": name, "arguments": {key: draw(json_values) for key in keys}}
        body = json.dumps(call)
        form = draw(st.sampled_from(["json", "hermes", "list", "string-args"]))
        if form == "hermes":
            return f"<tool_call>{body}</tool_call>"
        if form == "list":
            return json.dumps([call, call])
        if form == "string-args":
            return json.dumps({"name": name, "arguments": json.dumps(call["arguments"])})
        return body

    return build()


malformed_tool_calls = st.sampled_from(
    [
        "<tool_call>{not json}</tool_call>",
        "<tool_call>",
        '{"name": 3, "arguments": {}}',
        '{"name": "x", "arguments": [1, 2]}',
        '{"name": "x", "arguments": "{bad"}',
        '{"name": ',
        "[]",
        "<tool_call>[1, 2]</tool_call>",
    ]
)
"""Actions that look like tool calls but are broken in one specific way."""


def actions(tool_schemas: list[dict[str, Any]]) -> st.SearchStrategy[str]:
    """Any action an agent could send: Unicode text, tool calls, malformed calls, the stop token."""
    return st.one_of(
        st.text(max_size=200),
        tool_call_actions(tool_schemas),
        malformed_tool_calls,
        st.just("###STOP###"),
        st.just(""),
    )
