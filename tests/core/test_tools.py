"""@tool derives schemas from type hints and docstrings; Toolset turns every failure into an error result."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from trace_envs.core import ToolCall, ToolError, Toolset
from trace_envs.domains.tools import parse_docstring, tool


class Counter(BaseModel):
    value: int = 0
    log: list[str] = []


@tool(kind="write")
def add(state: Counter, amount: int, note: str = "", mode: Literal["add", "set"] = "add") -> Counter:
    """Add to the counter.

    Longer text that explains
    over two lines.

    Args:
        amount: How much to add,
            or the new value in set mode.
        note: A note for the log.
        mode: Whether to add or set.
    """
    if amount < 0:
        raise ToolError("amount must be non-negative")
    state.value = amount if mode == "set" else state.value + amount
    state.log.append(note)
    return state


@tool
def peek(state: Counter) -> int:
    """Read the counter."""
    return state.value


TOOLS = Toolset([add, peek])


def test_schema_is_derived_from_hints_and_docstring() -> None:
    schema = add.schema()
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "add"
    assert function["description"] == "Add to the counter.\n\nLonger text that explains\nover two lines."
    params = function["parameters"]
    assert params["title"] == "parameters"
    assert params["required"] == ["amount"]
    assert params["properties"]["amount"] == {
        "description": "How much to add,\nor the new value in set mode.",
        "title": "Amount",
        "type": "integer",
    }
    assert params["properties"]["mode"]["enum"] == ["add", "set"]
    assert "additionalProperties" not in params
    assert add.mutates and not peek.mutates
    assert peek.schema()["function"]["parameters"]["properties"] == {}


def test_invoke_runs_the_tool_and_serialises_the_result() -> None:
    state = Counter()
    result = TOOLS.invoke(state, ToolCall(name="add", arguments={"amount": 3, "note": "hi"}, id="c1"))
    assert not result.error
    assert result.call_id == "c1"
    assert result.content == '{"value": 3, "log": ["hi"]}'
    assert TOOLS.invoke(state, ToolCall(name="peek")).content == "3"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing required argument 'amount'"),
        ({"amount": "lots"}, "argument 'amount': Input should be a valid integer"),
        ({"amount": 1, "colour": "red"}, "unexpected argument(s) 'colour'"),
        ({"amount": 1, "mode": "multiply"}, "argument 'mode': Input should be 'add' or 'set'"),
        ({"amount": -1}, "Error: amount must be non-negative"),
    ],
)
def test_bad_arguments_become_error_results_that_say_what_was_wrong(
    arguments: dict[str, object], expected: str
) -> None:
    state = Counter()
    result = TOOLS.invoke(state, ToolCall(name="add", arguments=arguments))
    assert result.error
    assert expected in result.content
    assert state.value == 0


def test_unknown_tool_lists_the_available_ones() -> None:
    result = TOOLS.invoke(Counter(), ToolCall(name="subtract"))
    assert result.error
    assert result.content == "Error: Tool 'subtract' not found. Available tools: add, peek."


def test_tool_definitions_without_hints_or_docs_are_rejected() -> None:
    with pytest.raises(TypeError, match="needs a type hint"):

        @tool
        def no_hint(state, x):  # type: ignore[no-untyped-def]
            """Do.

            Args:
                x: thing.
            """

    with pytest.raises(TypeError, match="not described"):

        @tool
        def undocumented_arg(state: Counter, x: int) -> int:
            """Do something."""
            return x

    with pytest.raises(TypeError, match="first parameter"):

        @tool
        def no_state() -> int:
            """Do."""
            return 1


def test_subset_keeps_order_and_rules_and_rejects_unknown_names() -> None:
    assert list(TOOLS.subset(["peek", "add"])) == ["add", "peek"]
    with pytest.raises(KeyError, match="unknown tools"):
        TOOLS.subset(["nope"])
    with pytest.raises(ValueError, match="duplicate"):
        Toolset([add, add])


def test_parse_docstring_sections() -> None:
    doc = parse_docstring(
        """Short line.

        Args:
            a (int): First
                continued.
            b: Second.

        Returns:
            Something.
        """
    )
    assert doc.short == "Short line."
    assert doc.long == ""
    assert doc.args == {"a": "First\ncontinued.", "b": "Second."}
