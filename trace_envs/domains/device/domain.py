"""The ``device`` domain object: state model, agent-facing toolset and policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_envs.core import Domain

from .state import DeviceState, dump_world, load_world
from .tools import ALL_TOOLS
from .toolset import DeviceToolset

POLICY = (
    "You operate a user's phone through the tools provided. The phone keeps settings (wifi, cellular "
    "service, location service, low battery mode), contacts, text messages and reminders, and has a clock.\n"
    "- Do not guess values for tool arguments. Ask the user when a request is ambiguous or a detail is missing, "
    "and say so plainly when the task cannot be done with the tools you have.\n"
    "- When a tool reports an error, read it: many errors name a setting that blocks the action (for example "
    "low battery mode blocks turning services on; sending messages needs cellular service; online searches "
    "need wifi). Fix the blocking setting if the user's request allows it, then retry the action.\n"
    "- Never compute dates in your head from raw timestamps: get the current time with get_current_timestamp "
    "and convert between timestamps and calendar dates with the date-time tools.\n"
    "- When the task is done, tell the user the outcome in one short message."
)

FULL_TOOLSET = DeviceToolset(ALL_TOOLS)
"""All 34 tools, including the user's ``end_conversation``."""

AGENT_TOOLSET = FULL_TOOLSET.subset(FULL_TOOLSET.visible_to("AGENT"))
"""The 33 tools the agent may be offered, in ToolSandbox's discovery order."""


class DeviceDomain(Domain[DeviceState]):
    """Loads and dumps the world as ToolSandbox-named JSON tables."""

    def load_state(self, data: Mapping[str, Any]) -> DeviceState:
        return load_world(dict(data))

    def dump_state(self, state: DeviceState) -> dict[str, Any]:
        return dump_world(state)


DEVICE = DeviceDomain("device", DeviceState, AGENT_TOOLSET, POLICY)
