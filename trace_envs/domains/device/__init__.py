"""The ToolSandbox-style device domain: settings, contacts, messages, reminders and a simulated clock.

Tools keep ToolSandbox's names, arguments, types, defaults, result formats (Python ``repr``) and
error lines; they are importable as ``Tool`` objects (call them as ``tool(state, **arguments)``) and
run under ToolSandbox's calling rules through :class:`DeviceToolset`. Worlds are plain JSON tables
(``SETTING``, ``CONTACT``, ``MESSAGING``, ``REMINDER`` plus our ``SIMULATION`` clock).
"""

from __future__ import annotations

from .domain import AGENT_TOOLSET, DEVICE, FULL_TOOLSET, POLICY, DeviceDomain
from .errors import NOT_GIVEN, NotGiven, exception_line
from .registry import TOOL_SPECS, DeviceToolSpec
from .run import CallRecord, RunResult, run_tool_calls
from .state import (
    COLUMNS,
    TABLES,
    ContactRow,
    DeviceState,
    MessageRow,
    ReminderRow,
    SettingRow,
    Simulation,
    dump_world,
    duuid,
    load_world,
)
from .tools import *  # noqa: F403  (every tool by name)
from .tools import ALL_TOOLS
from .toolset import DeviceToolset, ToolOutcome, call_code
from .world import BASE_NOW, BASE_VARIANTS, build_base_world, generate_device_world

__all__ = [
    "AGENT_TOOLSET",
    "ALL_TOOLS",
    "BASE_NOW",
    "BASE_VARIANTS",
    "COLUMNS",
    "DEVICE",
    "FULL_TOOLSET",
    "NOT_GIVEN",
    "POLICY",
    "TABLES",
    "TOOL_SPECS",
    "CallRecord",
    "ContactRow",
    "DeviceDomain",
    "DeviceState",
    "DeviceToolSpec",
    "DeviceToolset",
    "MessageRow",
    "NotGiven",
    "ReminderRow",
    "RunResult",
    "SettingRow",
    "Simulation",
    "ToolOutcome",
    "build_base_world",
    "call_code",
    "dump_world",
    "duuid",
    "exception_line",
    "generate_device_world",
    "load_world",
    "run_tool_calls",
]
