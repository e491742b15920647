"""The date-time tools agree with Python's own datetime arithmetic (Hypothesis), in any fixed UTC offset."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from trace_envs.domains.device import (
    build_base_world,
    datetime_info_to_timestamp,
    search_holiday,
    seconds_to_hours_minutes_seconds,
    shift_timestamp,
    timestamp_diff,
    timestamp_to_datetime_info,
)
from trace_envs.domains.device.validators import MAX_TIMESTAMP, MIN_TIMESTAMP

timestamps = st.integers(min_value=int(MIN_TIMESTAMP) + 86400 * 30, max_value=int(MAX_TIMESTAMP) - 86400 * 400).map(
    float
)
offsets = st.sampled_from([0, 3600, -8 * 3600, 5 * 3600 + 1800, -3 * 3600 - 1800])
SETTINGS = settings(max_examples=60, deadline=None, database=None)


def world(offset: int):  # type: ignore[no-untyped-def]
    return build_base_world(utc_offset_seconds=offset)


def zone(offset: int) -> dt.timezone:
    return dt.timezone(dt.timedelta(seconds=offset))


@SETTINGS
@given(timestamps, offsets)
def test_timestamp_to_datetime_info(timestamp: float, offset: int) -> None:
    expected = dt.datetime.fromtimestamp(timestamp, tz=zone(offset))
    info = timestamp_to_datetime_info(world(offset), timestamp=timestamp)
    assert info == {
        "year": expected.year,
        "month": expected.month,
        "day": expected.day,
        "hour": expected.hour,
        "minute": expected.minute,
        "second": expected.second,
        "isoweekday": expected.isoweekday(),
    }
    back = datetime_info_to_timestamp(world(offset), **{k: v for k, v in info.items() if k != "isoweekday"})
    assert back == timestamp


@SETTINGS
@given(timestamps, offsets, st.integers(-10, 10), st.integers(-400, 400), st.integers(-48, 48),
       st.integers(-600, 600), st.integers(-5000, 5000))  # fmt: skip
def test_shift_timestamp(
    timestamp: float, offset: int, weeks: int, days: int, hours: int, minutes: int, seconds: int
) -> None:
    shifted = shift_timestamp(
        world(offset), timestamp=timestamp, weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds
    )
    delta = dt.timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    assert shifted == (dt.datetime.fromtimestamp(timestamp, tz=zone(offset)) + delta).timestamp()


@SETTINGS
@given(timestamps, timestamps, offsets)
def test_timestamp_diff(first: float, second: float, offset: int) -> None:
    delta = dt.datetime.fromtimestamp(second, tz=dt.UTC) - dt.datetime.fromtimestamp(first, tz=dt.UTC)
    assert timestamp_diff(world(offset), timestamp_0=first, timestamp_1=second) == {
        "days": delta.days,
        "seconds": delta.seconds,
    }


@SETTINGS
@given(st.integers(0, 86399))
def test_seconds_to_hours_minutes_seconds(seconds: int) -> None:
    assert seconds_to_hours_minutes_seconds(world(0), seconds=float(seconds)) == {
        "hour": seconds // 3600,
        "minute": seconds % 3600 // 60,
        "second": seconds % 60,
    }


@SETTINGS
@given(st.integers(1990, 2049), offsets)
def test_holidays_are_local_midnights_of_the_right_day(year: int, offset: int) -> None:
    state = world(offset)
    christmas = search_holiday(state, holiday_name="christmas", year=year)
    thanksgiving = search_holiday(state, holiday_name="Thanksgiving", year=year)
    assert christmas is not None and thanksgiving is not None
    day = dt.datetime.fromtimestamp(christmas, tz=zone(offset))
    assert (day.month, day.hour, day.minute) == (12, 0, 0)
    assert day.day in (25, 26) if dt.date(year, 12, 25).weekday() == 6 else day.day == 25
    thursday = dt.datetime.fromtimestamp(thanksgiving, tz=zone(offset)).date()
    assert thursday.month == 11 and thursday.weekday() == 3 and 22 <= thursday.day <= 28


def test_paper_examples() -> None:
    """TRACE's datetime examples: 1774511873 is 26 March 2026; Christmas 2026 is 273 days away."""
    state = world(0)
    assert timestamp_to_datetime_info(state, timestamp=1774511873.0)["day"] == 26
    christmas = search_holiday(state, holiday_name="Christmas Day", year=2026)
    assert christmas is not None
    assert timestamp_diff(state, timestamp_0=1774511873.0, timestamp_1=christmas)["days"] == 273
    assert search_holiday(state, holiday_name="Christmas Day") == christmas  # year defaults to the simulated now
    assert search_holiday(state, holiday_name="Groundhog Day Extravaganza", year=2026) is None
