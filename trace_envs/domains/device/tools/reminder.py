"""Reminder tools: add, modify, remove and search the REMINDER table."""

from __future__ import annotations

from typing import Any

from ..errors import NOT_GIVEN, NotGiven
from ..registry import device_tool, given
from ..state import DeviceState, ReminderRow
from ..validators import check_latitude, check_longitude, check_timestamp
from . import _tables


@device_tool("reminder", kind="write")
def add_reminder(
    state: DeviceState,
    content: str,
    reminder_timestamp: float,
    latitude: float | None = None,
    longitude: float | None = None,
) -> str:
    """Add a reminder

    Args:
        content:                Content of the reminder
        reminder_timestamp:     When the user wants to be reminded. Expressed in POSIX timestamp
        latitude:               Optional. Latitude of the location associated with this reminder
        longitude:              Optional. Longitude of the location associated with this reminder

    Returns:
        String format unique identifier for the reminder
    """
    check_timestamp("reminder_timestamp", reminder_timestamp)
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    reminder_id = state.new_id("reminder")
    state.REMINDER.append(
        ReminderRow(
            reminder_id=reminder_id,
            content=content,
            creation_timestamp=state.now,
            reminder_timestamp=reminder_timestamp,
            latitude=latitude,
            longitude=longitude,
        )
    )
    return reminder_id


@device_tool("reminder", kind="write")
def modify_reminder(
    state: DeviceState,
    reminder_id: str,
    content: str | NotGiven = NOT_GIVEN,
    reminder_timestamp: float | NotGiven = NOT_GIVEN,
    latitude: float | NotGiven | None = NOT_GIVEN,
    longitude: float | NotGiven | None = NOT_GIVEN,
) -> None:
    """Modify a reminder with new information provided. Creation timestamp is updated automatically.

    Args:
        reminder_id:            String format unique identifier of the reminder to be modified
        content:                New content
        reminder_timestamp:     When the user wants to be reminded. Expressed in POSIX timestamp
        latitude:               Optional. Latitude of the location associated with this reminder
        longitude:              Optional. Longitude of the location associated with this reminder

    Raises:
        DuplicateError:     If more than 1 entry with the reminder_id is found
        NoDataError:        If no entry with the reminder_id is found
        ValueError:         If no update information is given
    """
    check_timestamp("reminder_timestamp", reminder_timestamp)
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    updates: dict[str, Any] = {
        key: value
        for key, value in (
            ("content", content),
            ("reminder_timestamp", reminder_timestamp),
            ("latitude", latitude),
            ("longitude", longitude),
        )
        if given(value)
    }
    if not updates:
        raise ValueError(
            "No update information given. At least one new field should be provided among "
            "[content, reminder_timestamp, latitude, longitude] in order to modify reminder"
        )
    index = _tables.find_one(state.REMINDER, "reminder_id", reminder_id)
    row = state.REMINDER.pop(index)
    for key in ("reminder_timestamp", "latitude", "longitude"):
        if key in updates and updates[key] is not None:
            updates[key] = float(updates[key])
    state.REMINDER.append(row.model_copy(update={**updates, "creation_timestamp": state.now}))


@device_tool("reminder")
def search_reminder(
    state: DeviceState,
    reminder_id: str | NotGiven = NOT_GIVEN,
    content: str | NotGiven = NOT_GIVEN,
    creation_timestamp_lowerbound: float | NotGiven = NOT_GIVEN,
    creation_timestamp_upperbound: float | NotGiven = NOT_GIVEN,
    reminder_timestamp_lowerbound: float | NotGiven = NOT_GIVEN,
    reminder_timestamp_upperbound: float | NotGiven = NOT_GIVEN,
    latitude: float | NotGiven = NOT_GIVEN,
    longitude: float | NotGiven = NOT_GIVEN,
) -> list[dict[str, Any]]:
    """Search for a reminder based on provided arguments

    Each field has a search criteria of either
    1. Exact value matching
    2. Fuzzy string matching with a predefined threshold
    3. Range matching timestamp with upperbound or lowerbound

    Search results contains all reminder entries that matched all criteria

    Args:
        reminder_id:                    String format unique identifier for the reminder person, will be exact
                                        matched
        content:                        Content of the reminder, will be fuzzy matched
        creation_timestamp_lowerbound:  Lowerbound of the POSIX timestamp of the time the reminder is created.
        creation_timestamp_upperbound:  Upperbound of the POSIX timestamp of the time the reminder is created.
        reminder_timestamp_lowerbound:  Lowerbound of the POSIX timestamp of the time the reminder should be
                                        reminded.
        reminder_timestamp_upperbound:  Upperbound of the POSIX timestamp of the time the reminder should be
                                        reminded.
        latitude:                       Latitude of the location associated with the reminder. Will be exact
                                        matched.
        longitude:                      Longitude of the location associated with the reminder. Will be exact
                                        matched.

    Returns:
        A List of matching reminders. An empty List if no matches are found
    """
    for name, value in (
        ("creation_timestamp_lowerbound", creation_timestamp_lowerbound),
        ("creation_timestamp_upperbound", creation_timestamp_upperbound),
        ("reminder_timestamp_lowerbound", reminder_timestamp_lowerbound),
        ("reminder_timestamp_upperbound", reminder_timestamp_upperbound),
    ):
        check_timestamp(name, value)
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    criteria = (
        reminder_id,
        content,
        creation_timestamp_lowerbound,
        creation_timestamp_upperbound,
        reminder_timestamp_lowerbound,
        reminder_timestamp_upperbound,
        latitude,
        longitude,
    )
    if not any(given(value) for value in criteria):
        raise _tables.no_criteria(
            (
                "reminder_id",
                "content",
                "creation_timestamp",
                "creation_timestamp",
                "reminder_timestamp",
                "reminder_timestamp",
                "latitude",
                "longitude",
            )
        )
    rows: list[Any] = list(state.REMINDER)
    rows = _tables.exact(rows, "reminder_id", reminder_id)
    rows = _tables.fuzzy(rows, "content", content, 50)
    rows = _tables.bounded(rows, "creation_timestamp", creation_timestamp_lowerbound, creation_timestamp_upperbound)
    rows = _tables.bounded(rows, "reminder_timestamp", reminder_timestamp_lowerbound, reminder_timestamp_upperbound)
    rows = _tables.exact_number(rows, "latitude", latitude)
    rows = _tables.exact_number(rows, "longitude", longitude)
    return _tables.dump(rows)


@device_tool("reminder", kind="write")
def remove_reminder(state: DeviceState, reminder_id: str) -> None:
    """Remove a reminder given its unique identifier

    Args:
        reminder_id:    String format unique identifier of the reminder to be removed

    Raises:
        NoDataError:    If the provided reminder_id was not found
    """
    state.REMINDER = _tables.remove_matching(state.REMINDER, "reminder_id", reminder_id)
