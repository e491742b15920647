"""Utility tools: the simulated clock, date-time arithmetic, holidays, units and distances.

Every conversion between timestamps and calendar fields uses the world's fixed UTC offset
(``SIMULATION.utc_offset_seconds``) where upstream uses the host's local time zone. Units and distances
call pint and geopy as upstream does (the ``device`` extra, imported on first use).
"""

from __future__ import annotations

import datetime as dt

from ..errors import NotGiven
from ..extras import require
from ..fuzzy import default_process, partial_ratio
from ..holidays import us_holidays
from ..registry import device_tool
from ..state import DeviceState
from ..units import convert
from ..validators import check_latitude, check_longitude, check_timestamp


def local_zone(state: DeviceState) -> dt.timezone:
    """The device's time zone: a fixed offset from UTC."""
    return dt.timezone(dt.timedelta(seconds=state.SIMULATION.utc_offset_seconds))


def to_local(state: DeviceState, timestamp: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(timestamp, tz=local_zone(state))


@device_tool("utilities")
def get_current_timestamp(state: DeviceState) -> float:
    """Get current POSIX timestamp

    Returns:
        Float representing the current POSIX timestamp
    """
    return float(state.now)


@device_tool("utilities")
def timestamp_to_datetime_info(state: DeviceState, timestamp: float) -> dict[str, int]:
    """Convert POSIX timestamp to a dictionary of date time information, including
    ["year", "month", "day", "hour", "minute", "second", "isoweekday"]
    isoweekday ranges from [1, 7]

    Args:
        timestamp:  Float representing POSIX timestamp

    Returns:
        A dictionary with the keys year, month, day, hour, minute, second and isoweekday
    """
    check_timestamp("timestamp", timestamp)
    moment = to_local(state, timestamp)
    return {
        "year": moment.year,
        "month": moment.month,
        "day": moment.day,
        "hour": moment.hour,
        "minute": moment.minute,
        "second": moment.second,
        "isoweekday": moment.isoweekday(),
    }


@device_tool("utilities")
def datetime_info_to_timestamp(
    state: DeviceState, year: int, month: int, day: int, hour: int, minute: int, second: int
) -> float:
    """Convert  date time information to POSIX timestamp

    Args:
        year:   Year of timestamp
        month:  Month of timestamp
        day:    Day of timestamp
        hour:   Hour of timestamp in 24hr format
        minute: Minute of timestamp
        second: Second of timestamp

    Returns:
        Float representing POSIX timestamp
    """
    return dt.datetime(year, month, day, hour, minute, second, tzinfo=local_zone(state)).timestamp()


@device_tool("utilities")
def shift_timestamp(
    state: DeviceState,
    timestamp: float,
    weeks: int = 0,
    days: int = 0,
    hours: int = 0,
    minutes: int = 0,
    seconds: int = 0,
) -> float:
    """Shifts a POSIX timestamp by provided deltas. Delta can be positive or negative.

    Args:
        timestamp:  POSIX timestamp to be shifted
        weeks:      Number of weeks to add or subtract
        days:       Number of days to add or subtract
        hours:      Number of hours to add or subtract
        minutes:    Number of minutes to add or subtract
        seconds:    Number of seconds to add or subtract

    Returns:
        Shifted POSIX timestamp
    """
    check_timestamp("timestamp", timestamp)
    delta = dt.timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    return (to_local(state, timestamp) + delta).timestamp()


@device_tool("utilities")
def timestamp_diff(state: DeviceState, timestamp_0: float, timestamp_1: float) -> dict[str, int]:
    """Calculates the difference between two timestamps, timestamp_1 - timestamp_0, return the difference
    represented in days and seconds

    Args:
        timestamp_0:    Timestamp to subtract
        timestamp_1:    Timestamp to subtract from

    Returns:
        A dictionary with keys days and seconds
    """
    check_timestamp("timestamp_0", timestamp_0)
    check_timestamp("timestamp_1", timestamp_1)
    delta = to_local(state, timestamp_1) - to_local(state, timestamp_0)
    return {"days": delta.days, "seconds": delta.seconds}


@device_tool("utilities")
def seconds_to_hours_minutes_seconds(state: DeviceState, seconds: float) -> dict[str, int]:
    """Convert total number of seconds past 0:00 into hours, minutes and seconds

    Args:
        seconds:    Number of seconds past 0:00

    Returns:
        A dictionary with keys hour, minute and second
    """
    moment = to_local(state, seconds)
    return {"hour": moment.hour, "minute": moment.minute, "second": moment.second}


@device_tool("utilities")
def unit_conversion(state: DeviceState, amount: float, from_unit: str, to_unit: str) -> float:
    """Convert a certain amount from one unit to another

    You can use common english names to represent the from and to units

    Args:
        amount:     Float point amount in from_unit
        from_unit:  Unit to convert from. For example celsius
        to_unit:    Unit to convert to. For example fahrenheit

    Returns:
        Converted amount in to_unit
    """
    return convert(amount, from_unit, to_unit)


@device_tool("utilities")
def calculate_lat_lon_distance(
    state: DeviceState, latitude_0: float, longitude_0: float, latitude_1: float, longitude_1: float
) -> float:
    """Calculate the distance between 2 pairs of latitude and longitude.

    Args:
        latitude_0:     First Latitude.
        longitude_0:    First Longitude.
        latitude_1:     Second Latitude.
        longitude_1:    Second Longitude.

    Returns:
        Distance in kilometers
    """
    check_latitude("latitude_0", latitude_0)  # upstream's order: both latitudes, then both longitudes
    check_latitude("latitude_1", latitude_1)
    check_longitude("longitude_0", longitude_0)
    check_longitude("longitude_1", longitude_1)
    distance = require("geopy.distance", "calculate_lat_lon_distance")
    return float(distance.distance((latitude_0, longitude_0), (latitude_1, longitude_1)).kilometers)


@device_tool("utilities")
def search_holiday(state: DeviceState, holiday_name: str, year: int | None = None) -> float | None:
    """Search for a holiday by name in the US. Canonicalize return value into corresponding POSIX timestamp.

    Args:
        holiday_name:   Name of the holiday in surface form string
        year:           Optional. Year to search the holiday in. When not provided defaults to current year.

    Returns:
        A float POSIX timestamp of the holiday (local midnight), or None when no holiday matches

    Raises:
        ConnectionError: If wifi is not enabled
    """
    if not state.settings.wifi:
        raise ConnectionError("Wifi is not enabled")
    if year is None or isinstance(year, NotGiven):
        year = to_local(state, state.now).year
    query = default_process(holiday_name)
    scored = sorted(
        ((partial_ratio(query, default_process(name)), day, name) for day, name in us_holidays(year)),
        reverse=True,
    )
    if not scored or scored[0][0] <= 90:
        return None
    day = scored[0][1]
    return dt.datetime(day.year, day.month, day.day, tzinfo=local_zone(state)).timestamp()
