"""Every accepted tool-call syntax parses; everything malformed is an error, never an exception."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_envs.core import ToolCall, format_tool_call, parse_action

CALL = ToolCall(name="get_user_details", arguments={"user_id": "sara_doe_496"})


@pytest.mark.parametrize(
    "action",
    [
        '{"name": "get_user_details", "arguments": {"user_id": "sara_doe_496"}}',
        '  {"name": "get_user_details", "arguments": "{\\"user_id\\": \\"sara_doe_496\\"}"}  ',
        '{"name": "get_user_details", "parameters": {"user_id": "sara_doe_496"}}',
        '<tool_call>{"name": "get_user_details", "arguments": {"user_id": "sara_doe_496"}}</tool_call>',
        '```json\n{"name": "get_user_details", "arguments": {"user_id": "sara_doe_496"}}\n```',
        {"name": "get_user_details", "arguments": {"user_id": "sara_doe_496"}},
        {
            "id": "x",
            "type": "function",
            "function": {"name": "get_user_details", "arguments": '{"user_id": "sara_doe_496"}'},
        },
        CALL,
    ],
)
def test_single_call_forms(action: object) -> None:
    parsed = parse_action(action)
    assert parsed.errors == []
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(CALL.name, CALL.arguments)]


def test_several_calls_in_one_action_and_surrounding_text() -> None:
    text = (
        "Let me look both up.\n"
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>'
    )
    parsed = parse_action(text)
    assert [c.name for c in parsed.tool_calls] == ["a", "b"]
    assert parsed.content == "Let me look both up."
    listed = parse_action('[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]')
    assert [c.name for c in listed.tool_calls] == ["a", "b"]
    assert [c.name for c in parse_action([CALL, {"name": "b"}]).tool_calls] == ["get_user_details", "b"]


@pytest.mark.parametrize(
    ("action", "error"),
    [
        ("<tool_call>{not json}</tool_call>", "not valid JSON"),
        ('<tool_call>{"name": "a"}', "not closed"),
        ('{"name": 3, "arguments": {}}', "non-empty string 'name'"),
        ('{"name": "a", "arguments": [1]}', "must be a JSON object, got list"),
        ('{"name": "a", "arguments": "{bad"}', "arguments of tool call 'a' are not valid JSON"),
        ('{"name": "a", "arguments": {', "not valid JSON"),
        (42, "action must be text, got int"),
        ({"foo": 1}, "non-empty string 'name'"),
    ],
)
def test_malformed_calls_are_errors(action: object, error: str) -> None:
    parsed = parse_action(action)
    assert parsed.tool_calls == [] or parsed.errors
    assert any(error in e for e in parsed.errors), parsed.errors


@pytest.mark.parametrize("text", ["Hello!", "", '{"order": 1}', "[1, 2, 3]", "{curly but not a call}"])
def test_everything_else_is_a_message(text: str) -> None:
    parsed = parse_action(text)
    assert parsed.is_message
    assert parsed.text == text


def test_format_tool_call_round_trips() -> None:
    assert parse_action(format_tool_call(CALL)).tool_calls[0].arguments == CALL.arguments


@given(st.text())
def test_parse_never_raises(text: str) -> None:
    parsed = parse_action(text)
    assert parsed.is_message or parsed.tool_calls or parsed.errors
