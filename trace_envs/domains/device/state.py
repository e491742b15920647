"""The device world: ToolSandbox's four state tables plus a simulated clock, as plain JSON tables.

JSON layout (what :func:`load_world` reads and :func:`dump_world` writes)::

    {"SETTING":   [{"device_id", "cellular", "wifi", "location_service", "low_battery_mode",
                    "latitude", "longitude"}],
     "CONTACT":   [{"person_id", "name", "phone_number", "relationship", "is_self"}, ...],
     "MESSAGING": [{"message_id", "sender_person_id", "sender_phone_number", "recipient_person_id",
                    "recipient_phone_number", "content", "creation_timestamp"}, ...],
     "REMINDER":  [{"reminder_id", "content", "creation_timestamp", "reminder_timestamp",
                    "latitude", "longitude"}, ...],
     "SIMULATION": {"current_timestamp", "utc_offset_seconds", "backend_seed", "next_id"}}

Table and column names are ToolSandbox's (its ``sandbox_message_index`` column is not stored: the
trajectory keeps one snapshot per message instead). ``SIMULATION`` is ours: upstream reads the host
clock and time zone, we read a seeded clock so that every run is reproducible.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

TABLES: tuple[str, ...] = ("SETTING", "CONTACT", "MESSAGING", "REMINDER")
"""ToolSandbox's state namespaces (``SANDBOX``, the message log, lives in the trajectory)."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class SettingRow(_Row):
    device_id: str | None = None
    cellular: bool | None = None
    wifi: bool | None = None
    location_service: bool | None = None
    low_battery_mode: bool | None = None
    latitude: float | None = None
    longitude: float | None = None


class ContactRow(_Row):
    person_id: str | None = None
    name: str | None = None
    phone_number: str | None = None
    relationship: str | None = None
    is_self: bool | None = None


class MessageRow(_Row):
    message_id: str | None = None
    sender_person_id: str | None = None
    sender_phone_number: str | None = None
    recipient_person_id: str | None = None
    recipient_phone_number: str | None = None
    content: str | None = None
    creation_timestamp: float | None = None


class ReminderRow(_Row):
    reminder_id: str | None = None
    content: str | None = None
    creation_timestamp: float | None = None
    reminder_timestamp: float | None = None
    latitude: float | None = None
    longitude: float | None = None


class Simulation(_Row):
    """The simulated clock and the seed of the offline network backend."""

    current_timestamp: float = Field(description="POSIX seconds that 'now' means for every tool.")
    utc_offset_seconds: int = Field(
        default=0, ge=-86_399, le=86_399, description="Fixed offset of the device's local time from UTC."
    )
    backend_seed: int = Field(default=0, description="Seed of the offline weather/location/stock/currency backend.")
    next_id: int = Field(default=0, ge=0, description="Counter behind the deterministic ids of new rows.")


COLUMNS: dict[str, tuple[str, ...]] = {
    "SETTING": tuple(SettingRow.model_fields),
    "CONTACT": tuple(ContactRow.model_fields),
    "MESSAGING": tuple(MessageRow.model_fields),
    "REMINDER": tuple(ReminderRow.model_fields),
}


class DeviceState(BaseModel):
    """The whole world one episode acts on. Tools mutate it in place."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    SETTING: list[SettingRow] = Field(min_length=1, max_length=1)
    CONTACT: list[ContactRow] = Field(default_factory=list)
    MESSAGING: list[MessageRow] = Field(default_factory=list)
    REMINDER: list[ReminderRow] = Field(default_factory=list)
    SIMULATION: Simulation

    @property
    def settings(self) -> SettingRow:
        return self.SETTING[0]

    @property
    def now(self) -> float:
        return self.SIMULATION.current_timestamp

    def new_id(self, kind: str) -> str:
        """A deterministic replacement for upstream's ``uuid4()``: uuid5 of a per-world counter."""
        self.SIMULATION.next_id += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"trace-envs/device/{kind}/{self.SIMULATION.next_id}"))


def duuid(payload: str) -> str:
    """ToolSandbox's deterministic id: ``uuid5(NAMESPACE_URL, payload)``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, payload))


def load_world(data: dict[str, Any]) -> DeviceState:
    """A fresh :class:`DeviceState` from JSON tables; a bad field raises naming the table and column."""
    return DeviceState.model_validate(data)


def dump_world(state: DeviceState) -> dict[str, Any]:
    """The world as plain JSON tables (floats stay floats, column order as in ToolSandbox)."""
    return state.model_dump(mode="json")


def table_rows(state: DeviceState, table: str) -> list[dict[str, Any]]:
    """One table as a list of row dicts (the shape search tools return)."""
    return [row.model_dump() for row in getattr(state, table)]
