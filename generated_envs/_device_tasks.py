"""Shared pieces of the device-side capability envs (permission recovery, date-time reasoning).

* :class:`Plan` writes a reference solution by running every call on a scratch world with the real
  device tools, so every value the solution states is the tools' own. A call may be *expected* to
  fail (the permission error the agent must recover from); the plan records its index.
* :class:`DeviceTaskEnv` is a ``CapabilityEnv`` over the real ``device`` domain with this project's
  device policy; tasks list the plan's expected failures in ``Task.expected_errors`` so that the
  gold replay accepts exactly those.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, TypeVar

from pydantic import BaseModel

from trace_envs.core import CapabilityEnv, Domain, ToolCall
from trace_envs.domains.device import DEVICE, POLICY, DeviceState

TOOLSET = DEVICE.toolset
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class Plan:
    """A reference solution built by running each call on ``state`` (a scratch copy of the world)."""

    def __init__(self, state: DeviceState):
        self.state = state
        self.steps: list[ToolCall | str] = []
        self.expected_errors: list[int] = []
        self.errors: list[str] = []

    def _run(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """The tool under the device calling rules (binding, type checks, error lines), without the trace
        that ``DeviceToolset.execute`` builds: a plan only needs values."""
        self.steps.append(ToolCall.model_construct(name=tool, arguments=arguments, id=""))
        item = TOOLSET[tool]
        try:
            return True, item.fn(self.state, **TOOLSET.bind(item, arguments))
        except Exception as exc:  # the tool's failure, as the agent would see it
            return False, TOOLSET.format_error(tool, exc)

    def call(self, tool: str, /, expect_error: str | None = None, **arguments: Any) -> Any:
        """Run one call; ``expect_error`` (an exception class name) marks a call that must fail that way."""
        ok, value = self._run(tool, arguments)
        if expect_error is not None:
            if ok or not value.startswith(expect_error):
                raise RuntimeError(f"plan: {tool}{arguments} should fail with {expect_error}, got {value!r}")
            self.expected_errors.append(len(self.steps) - 1)
            self.errors.append(value)
        elif not ok:
            raise RuntimeError(f"plan: {tool}{arguments} failed: {value}")
        return value

    def attempt(self, tool: str, /, **arguments: Any) -> tuple[bool, Any]:
        """Run one call that may fail: ``(True, value)``, or ``(False, error line)`` recorded as an expected error."""
        ok, value = self._run(tool, arguments)
        if not ok:
            self.expected_errors.append(len(self.steps) - 1)
            self.errors.append(value)
        return ok, value

    def say(self, text: str) -> str:
        self.steps.append(text)
        return text


DeviceKnobsT = TypeVar("DeviceKnobsT", bound=BaseModel)


class DeviceTaskEnv(CapabilityEnv[DeviceKnobsT]):
    """A capability env over the real device domain (its tools, state tables and calling rules)."""

    domain: Domain[Any] = DEVICE

    policy = POLICY + (
        "\n- When you changed a setting to get a request done, tell the user which setting you changed."
        "\n- Write dates for the user as month name and day, for example March 27."
    )


def local_datetime(state: DeviceState, timestamp: float) -> dt.datetime:
    """What ``timestamp_to_datetime_info`` reads: the timestamp in the device's fixed UTC offset."""
    zone = dt.timezone(dt.timedelta(seconds=state.SIMULATION.utc_offset_seconds))
    return dt.datetime.fromtimestamp(timestamp, tz=zone)


def date_text(day: dt.date) -> str:
    """ "March 27": how dates are told to the user (and matched as facts)."""
    return f"{MONTHS[day.month - 1]} {day.day}"


def time_text(hour: int, minute: int) -> str:
    """ "5 PM", "8:30 AM"."""
    shown = hour % 12 or 12
    suffix = "AM" if hour < 12 else "PM"
    return f"{shown} {suffix}" if minute == 0 else f"{shown}:{minute:02d} {suffix}"
