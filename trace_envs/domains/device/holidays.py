"""US federal holidays as ``search_holiday`` sees them (python-holidays' US calendar, computed here).

Includes the "(observed)" entries: a holiday on a Saturday is observed the Friday before, on a
Sunday the Monday after (New Year's Day on a Saturday is observed on 31 December of the year before).
"""

from __future__ import annotations

import datetime as dt


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    """The n-th (1-based; -1 = last) given weekday (Mon=0) of a month."""
    if n > 0:
        first = dt.date(year, month, 1)
        return first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1)
    return last - dt.timedelta(days=(last.weekday() - weekday) % 7)


def _observed(day: dt.date) -> dt.date | None:
    if day.weekday() == 5:
        return day - dt.timedelta(days=1)
    if day.weekday() == 6:
        return day + dt.timedelta(days=1)
    return None


def us_holidays(year: int) -> list[tuple[dt.date, str]]:
    """(date, name) of the US federal holidays of ``year`` incl. observed days, sorted by date."""
    fixed: list[tuple[dt.date, str]] = [(dt.date(year, 1, 1), "New Year's Day")]
    if year >= 2021:
        fixed.append((dt.date(year, 6, 19), "Juneteenth National Independence Day"))
    fixed += [
        (dt.date(year, 7, 4), "Independence Day"),
        (dt.date(year, 11, 11), "Veterans Day"),
        (dt.date(year, 12, 25), "Christmas Day"),
    ]
    days = list(fixed)
    for day, name in fixed:
        observed = _observed(day)
        if observed is not None and observed.year == year:
            days.append((observed, f"{name} (observed)"))
    next_new_year = dt.date(year + 1, 1, 1)
    if next_new_year.weekday() == 5:
        days.append((dt.date(year, 12, 31), "New Year's Day (observed)"))
    if year >= 1986:
        days.append((_nth_weekday(year, 1, 0, 3), "Martin Luther King Jr. Day"))
    days += [
        (_nth_weekday(year, 2, 0, 3), "Washington's Birthday"),
        (_nth_weekday(year, 5, 0, -1), "Memorial Day"),
        (_nth_weekday(year, 9, 0, 1), "Labor Day"),
        (_nth_weekday(year, 10, 0, 2), "Columbus Day"),
        (_nth_weekday(year, 11, 3, 4), "Thanksgiving"),
    ]
    return sorted(days)
