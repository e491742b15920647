"""``DeviceToolset``: ToolSandbox's calling conventions and schema format on top of core ``Toolset``.

* Binding: a missing argument is ``TypeError: missing a required argument: 'x'``, an unknown one
  ``TypeError: got an unexpected keyword argument 'x'`` (``inspect.Signature.bind`` order); then the
  typechecked tools check every passed argument (see ``validators``).
* Results are the Python ``repr`` of the return value; errors the exception line
  ``"{ExceptionClass}: {message}"``.
* Schemas: ``{"type": "function", "function": {"name", "description", "parameters": {"type": "object",
  "properties": {arg: {"type", "description"}}, "required": [...]}}}``, property type first,
  ``required`` always present.
* Every successful call leaves a tool trace: ``json.dumps({"tool_name", "arguments", "result"})`` with
  all arguments incl. defaults (not NOT_GIVEN ones), as upstream's ``tool_trace`` column holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trace_envs.core import Tool, ToolCall, ToolResult, Toolset

from .errors import NOT_GIVEN, exception_line
from .extras import MissingExtraError
from .registry import TOOL_SPECS, DeviceToolSpec
from .validators import check_type


@dataclass(frozen=True)
class ToolOutcome:
    """One executed call: what the agent sees, the raw value, the trace and the exception line."""

    result: ToolResult
    value: Any = None
    trace: str | None = None
    exception: str | None = None

    @property
    def error(self) -> bool:
        return self.result.error


def call_code(call: ToolCall, call_id: str) -> str:
    """The three lines of Python that upstream sends to its execution environment for a call."""
    return (
        f"{call_id}_parameters = {call.arguments!r}\n"
        f"{call_id}_response = {call.name}(**{call_id}_parameters)\n"
        f"print(repr({call_id}_response))"
    )


class DeviceToolset(Toolset):
    """The device tools with ToolSandbox's argument binding, result text and schemas."""

    def __init__(self, tools: Iterable[Tool]):
        super().__init__(tools)
        for name in self:
            if name not in TOOL_SPECS:
                raise ValueError(f"{name!r} is not a device tool (define it with @device_tool)")

    def spec(self, name: str) -> DeviceToolSpec:
        return TOOL_SPECS[name]

    def schema(self, item: Tool) -> dict[str, Any]:
        spec = TOOL_SPECS[item.name]
        properties = {
            arg: {"type": spec.json_type(arg), "description": item.arg_descriptions[arg]} for arg in spec.arg_names
        }
        return {
            "type": "function",
            "function": {
                "name": item.name,
                "description": item.description,
                "parameters": {"type": "object", "properties": properties, "required": list(spec.required)},
            },
        }

    def bind(self, item: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        spec = TOOL_SPECS[item.name]
        for name in spec.required:
            if name not in arguments:
                raise TypeError(f"missing a required argument: '{name}'")
        for name in arguments:
            if name not in spec.arg_names:
                raise TypeError(f"got an unexpected keyword argument '{name}'")
        if spec.typechecked:
            for name in spec.arg_names:
                if name in arguments:
                    check_type(name, arguments[name], spec.hints[name])
        return dict(arguments)

    def format_result(self, value: Any) -> str:
        return repr(value)

    def format_error(self, item_name: str, exc: BaseException) -> str:
        return exception_line(exc)

    def unknown_tool(self, name: str) -> str:
        return f"KeyError: 'Tool {name} is not available. Available tools: {', '.join(self)}'"

    def traced_arguments(self, name: str, bound: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter with its value or default, except those left at NOT_GIVEN."""
        spec = TOOL_SPECS[name]
        traced: dict[str, Any] = {}
        for arg in spec.arg_names:
            value = bound[arg] if arg in bound else spec.defaults.get(arg, NOT_GIVEN)
            if value is not NOT_GIVEN:
                traced[arg] = value
        return traced

    def execute(self, state: Any, call: ToolCall) -> ToolOutcome:
        """Run one call on ``state``; failures become error outcomes (a missing ``device`` extra raises)."""
        item = self.get(call.name)
        if item is None:
            content = self.unknown_tool(call.name)
            return ToolOutcome(
                ToolResult(call_id=call.id, name=call.name, content=content, error=True), exception=content
            )
        try:
            kwargs = self.bind(item, call.arguments)
            value = item.fn(state, **kwargs)
        except MissingExtraError:  # a setup problem: stop here rather than show the agent an install hint
            raise
        except Exception as exc:  # the tool's failure is the agent's observation
            line = self.format_error(call.name, exc)
            return ToolOutcome(ToolResult(call_id=call.id, name=call.name, content=line, error=True), exception=line)
        trace = json.dumps(
            {"tool_name": call.name, "arguments": self.traced_arguments(call.name, kwargs), "result": value},
            ensure_ascii=False,
        )
        result = ToolResult(call_id=call.id, name=call.name, content=self.format_result(value), error=False)
        return ToolOutcome(result, value=value, trace=trace)

    def visible_to(self, role: str) -> list[str]:
        """Names of the tools offered to ``role`` ("AGENT" or "USER"), in discovery order."""
        return [name for name in self if TOOL_SPECS[name].visible_to == role]
