"""Run a list of tool calls on a world and get every call's result and the final tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core import ToolCall

from .state import DeviceState, dump_world, load_world
from .toolset import DeviceToolset


class CallRecord(BaseModel):
    """One executed call: what the agent would see and whether it failed."""

    name: str
    arguments: dict[str, Any]
    content: str = Field(description="The repr of the result, or the exception line.")
    error: bool
    exception: str | None = None
    trace: str | None = Field(default=None, description="The tool-trace JSON of a successful call.")


class RunResult(BaseModel):
    calls: list[CallRecord]
    tables: dict[str, Any] = Field(description="The final world as JSON tables.")


def run_tool_calls(
    world: Mapping[str, Any] | DeviceState,
    calls: Iterable[ToolCall | Mapping[str, Any]],
    toolset: DeviceToolset | None = None,
) -> RunResult:
    """Execute ``calls`` in order on a copy of ``world`` (JSON tables or a state); never raises for a bad call.

    ``calls`` are :class:`ToolCall` objects or ``{"name": ..., "arguments": {...}}`` dicts. The
    toolset defaults to every device tool (:data:`FULL_TOOLSET`).
    """
    from .domain import FULL_TOOLSET

    tools = toolset or FULL_TOOLSET
    state = load_world(dump_world(world) if isinstance(world, DeviceState) else dict(world))
    records: list[CallRecord] = []
    for index, raw in enumerate(calls):
        call = (
            raw if isinstance(raw, ToolCall) else ToolCall(name=raw["name"], arguments=dict(raw.get("arguments", {})))
        )
        outcome = tools.execute(state, call.model_copy(update={"id": call.id or f"call_{index}"}))
        records.append(
            CallRecord(
                name=call.name,
                arguments=dict(call.arguments),
                content=outcome.result.content,
                error=outcome.error,
                exception=outcome.exception,
                trace=outcome.trace,
            )
        )
    return RunResult(calls=records, tables=dump_world(state))
