"""Shared pieces of the device-side capability envs (permission recovery, date-time reasoning in ``generated_envs``).

:class:`DeviceTaskEnv` is a ``CapabilityEnv`` over the real ``device`` domain with this project's device
policy. Its tasks write their reference with core's ``Plan`` (the real device tools on a scratch world), so
the permission errors an agent must recover from are the plan's expected errors.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, TypeVar

from pydantic import BaseModel

from trace_envs.core import CapabilityEnv, Domain
from trace_envs.domains.device.domain import DEVICE, POLICY
from trace_envs.domains.device.state import DeviceState

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


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
