"""``trace/datetime-v0``: relative dates that need the device's date-time tools, not mental arithmetic.

Capability: datetime_reasoning — work out relative dates, times and the current year with the date-time tools
instead of decoding raw timestamps mentally.
Domain: device — the ToolSandbox-style device world: reminders and the date-time tools; the simulated clock
(``SIMULATION.current_timestamp``) and the UTC offset change with the seed, so a memorised date or a UTC decoding fails.
Task kinds: reminder: "remind me to X tomorrow at 5 PM" (the day after tomorrow, in N days, a week from today, this
coming Friday) via get_current_timestamp → timestamp_to_datetime_info (→ shift_timestamp → timestamp_to_datetime_info)
→ datetime_info_to_timestamp → add_reminder; reschedule: move an existing reminder to such a relative day and time
(modify_reminder); shift: move an existing reminder N days later or earlier (shift_timestamp on its timestamp);
holiday: "how many days until Thanksgiving?": the year from timestamp_to_datetime_info, search_holiday in that year
(the next one if it has passed), timestamp_diff.
Knobs: kinds (default all four): task kinds drawn; min_year (default 2025) and max_year (default 2030): range of the
simulated current year; vary_timezone (default true): draw the device's UTC offset per seed; reminders (default 3):
distractor reminders; max_days_ahead (default 10): largest N in "in N days" and "N days later/earlier".
Verifier: the gold state hash (the reminder added or moved to the right timestamp) and the answer's required facts
(the target date, e.g. "November 6", or "<N> day" for a holiday).
Failure it targets: the paper's Appendix F.2, C2: guessing today's date from the raw timestamp and getting it a day
wrong (reminders), and searching the holiday in 2023, a training-data year (holidays).
Example: seed 1: "Move my reminder "Call the landlord" so it goes off the day after tomorrow at 12 PM."; the reference
finds the reminder, reads the clock, shifts it 2 days, converts November 6 12:00 to a timestamp and modifies the
reminder; the flawed solution reads the raw timestamp a day wrong and sets November 5, so the state hash differs.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trace_envs.core import Capability, Plan, Task, ToolCall, UserScript
from trace_envs.domains.device import DEVICE, DeviceState, generate_device_world
from trace_envs.domains.device.flaws import date_arithmetic_in_head
from trace_envs.domains.device.tasks import WEEKDAYS, DeviceTaskEnv, date_text, local_datetime, time_text

Kind = Literal["reminder", "reschedule", "shift", "holiday"]
ALL_KINDS: tuple[Kind, ...] = ("reminder", "reschedule", "shift", "holiday")
TRAINING_YEAR = 2023
"""The year a model falls back to when it does not look the current year up (the paper's example)."""
UTC_OFFSETS = (-8 * 3600, -5 * 3600, -3 * 3600, 0, 3600, 2 * 3600, 19800, 8 * 3600, 9 * 3600)
"""Device time zones drawn with ``vary_timezone`` (seconds east of UTC; 19800 is UTC+5:30)."""
HOLIDAYS: dict[str, int] = {
    "Martin Luther King Jr. Day": 1, "Washington's Birthday": 2, "Memorial Day": 5, "Juneteenth": 6,
    "Independence Day": 7, "Labor Day": 9, "Columbus Day": 10, "Veterans Day": 11, "Thanksgiving": 11,
    "Christmas Day": 12,
}  # fmt: skip
"""What the user asks about, and the month ``search_holiday`` must land in (a check on the generator)."""
NEW_REMINDERS = (
    "Buy chocolate milk", "Call the plumber", "Pay the gardener", "Pick up the kids", "Book the car service",
    "Email the landlord", "Bring the umbrella", "Charge the camera", "Order flowers", "Check the oven",
)  # fmt: skip
HOLIDAY_QUESTIONS = ("How many days from today until {h}?", "How many days are left till {h}?")
HOURS = (7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)
MINUTES = (0, 0, 15, 30, 45)


class DatetimeKnobs(BaseModel):
    """Difficulty knobs of ``trace/datetime-v0``."""

    model_config = ConfigDict(extra="forbid")

    kinds: list[Kind] = Field(default_factory=lambda: list(ALL_KINDS), min_length=1, description="Task kinds drawn.")
    min_year: int = Field(default=2025, ge=2024, le=2048, description="Earliest simulated current year (> 2023).")
    max_year: int = Field(default=2030, ge=2024, le=2048, description="Latest simulated current year.")
    vary_timezone: bool = Field(
        default=True, description="Draw the device's UTC offset per seed (else UTC), so decoding in UTC is wrong."
    )
    reminders: int = Field(default=3, ge=1, le=8, description="Reminders already in the world (distractors).")
    max_days_ahead: int = Field(
        default=10, ge=3, le=30, description="Largest N in 'in N days' and 'N days later/earlier'."
    )

    @model_validator(mode="after")
    def _years(self) -> DatetimeKnobs:
        if self.min_year > self.max_year:
            raise ValueError(f"min_year ({self.min_year}) must be <= max_year ({self.max_year})")
        return self


class DatetimeEnv(DeviceTaskEnv[DatetimeKnobs]):
    """Relative dates through the date-time tools: reminders at relative times, shifts, days until a holiday."""

    capability = Capability(
        name="datetime_reasoning",
        description=(
            "Working out relative dates and times (tomorrow 5 PM, days until a holiday, the current year) with "
            "the date-time tools instead of decoding raw timestamps mentally; lacking when a date, year or "
            "timestamp is used that no tool produced and the user did not give."
        ),
        probe="generated_envs.probes.datetime_reasoning:probe_datetime",  # a reference: the module imports only the device kit
        flaws={"device": date_arithmetic_in_head},
        hint="Never work out dates or years in your head or from raw timestamps: get them from the date-time tools.",
    )
    domain = DEVICE  # as DeviceTaskEnv has it; declared here, where the contract gate reads it
    max_turns = 16
    tool_names = ("get_wifi_status", "add_reminder", "modify_reminder", "remove_reminder", "search_reminder",
                  "datetime_info_to_timestamp", "get_current_timestamp", "search_holiday",
                  "seconds_to_hours_minutes_seconds", "shift_timestamp", "timestamp_diff",
                  "timestamp_to_datetime_info")  # fmt: skip

    def generate(self, rng: random.Random) -> Task:
        knobs = self.knobs
        kind: Kind = rng.choice([k for k in ALL_KINDS if k in knobs.kinds])
        start = dt.datetime(knobs.min_year, 1, 1, tzinfo=dt.UTC).timestamp()
        end = dt.datetime(knobs.max_year + 1, 1, 1, tzinfo=dt.UTC).timestamp() - 1
        now = float(rng.randint(int(start), int(end)))
        offset = rng.choice(UTC_OFFSETS) if knobs.vary_timezone else 0
        world = generate_device_world(
            rng, n_contacts=1, n_messages=0, n_reminders=knobs.reminders, now=now, utc_offset_seconds=offset
        )
        plan = Plan(DEVICE, world)
        builders = {
            "reminder": self._build_reminder,
            "reschedule": self._build_reschedule,
            "shift": self._build_shift,
            "holiday": self._build_holiday,
        }
        return builders[kind](rng, plan)

    def _relative_day(self, rng: random.Random, today: dt.date) -> tuple[str, int]:
        """A phrase for a day after today and how many days ahead it is."""
        choice = rng.randrange(5)
        if choice == 0:
            return "tomorrow", 1
        if choice == 1:
            return "the day after tomorrow", 2
        if choice == 2:
            n = rng.randint(3, self.knobs.max_days_ahead)
            return f"in {n} days", n
        if choice == 3:
            return "a week from today", 7
        weekday = rng.randrange(7)
        ahead = (weekday - today.weekday()) % 7 or 7
        return f"this coming {WEEKDAYS[weekday]}", ahead

    def _build_reminder(self, rng: random.Random, plan: Plan) -> Task:
        """A new reminder at a relative day and time."""
        return self._at_relative_day(rng, plan, "reminder")

    def _build_reschedule(self, rng: random.Random, plan: Plan) -> Task:
        """An existing reminder moved to a relative day and time."""
        return self._at_relative_day(rng, plan, "reschedule")

    def _at_relative_day(self, rng: random.Random, plan: Plan, kind: Kind) -> Task:
        """The reference and the a-day-wrong flawed solution shared by ``reminder`` and ``reschedule``."""
        state = plan.state
        now = state.now
        today = local_datetime(state, now).date()
        phrase, ahead = self._relative_day(rng, today)
        hour, minute = rng.choice(HOURS), rng.choice(MINUTES)
        when = f"{phrase} at {time_text(hour, minute)}"
        flawed: list[ToolCall | str] = []
        if kind == "reschedule":
            reminder = rng.choice(state.REMINDER)
            content = reminder.content or ""
            opening = f'Move my reminder "{content}" so it goes off {when}.'
            reminder_id = self._find_reminder(plan, content)
            flawed.append(plan.steps[-1])
        else:
            content = rng.choice(NEW_REMINDERS)
            opening = f'Remind me to "{content}" {when}.'
        plan.call("get_current_timestamp")
        flawed.append(plan.steps[-1])
        info = plan.call("timestamp_to_datetime_info", timestamp=now)
        if ahead == 1:
            day = dt.date(info["year"], info["month"], info["day"]) + dt.timedelta(days=1)
        else:
            later = plan.call("shift_timestamp", timestamp=now, days=ahead)
            shifted = plan.call("timestamp_to_datetime_info", timestamp=later)
            day = dt.date(shifted["year"], shifted["month"], shifted["day"])
        target = plan.call(
            "datetime_info_to_timestamp",
            year=day.year,
            month=day.month,
            day=day.day,
            hour=hour,
            minute=minute,
            second=0,
        )
        guess = today - dt.timedelta(days=1) + dt.timedelta(days=ahead)  # the raw timestamp read a day wrong
        wrong = ToolCall(
            name="datetime_info_to_timestamp",
            arguments={"year": guess.year, "month": guess.month, "day": guess.day, "hour": hour, "minute": minute,
                       "second": 0},
        )  # fmt: skip
        wrong_target = dt.datetime(guess.year, guess.month, guess.day, hour, minute, tzinfo=_zone(state)).timestamp()
        if kind == "reschedule":
            plan.call("modify_reminder", reminder_id=reminder_id, reminder_timestamp=target)
            write = ToolCall(name="modify_reminder", arguments={"reminder_id": reminder_id,
                                                                "reminder_timestamp": wrong_target})  # fmt: skip
            done = f'I moved your reminder "{content}" to {{day}} at {time_text(hour, minute)}.'
        else:
            plan.call("add_reminder", content=content, reminder_timestamp=target)
            write = ToolCall(name="add_reminder", arguments={"content": content, "reminder_timestamp": wrong_target})
            done = f'Done: I set a reminder "{content}" for {{day}} at {time_text(hour, minute)}.'
        plan.say(done.format(day=date_text(day)))
        flawed += [wrong, write, done.format(day=date_text(guess))]
        return self._task(plan, opening, kind, [date_text(day)], flawed, phrase=phrase)

    def _build_shift(self, rng: random.Random, plan: Plan) -> Task:
        """An existing reminder moved N days later or earlier."""
        state = plan.state
        reminder = rng.choice(state.REMINDER)
        content = reminder.content or ""
        days = rng.randint(1, self.knobs.max_days_ahead)
        later = rng.random() < 0.6
        phrase = f"{days} day{'s' if days > 1 else ''} {'later' if later else 'earlier'}"
        opening = f'Move my reminder "{content}" {phrase}.'
        reminder_id = self._find_reminder(plan, content)
        flawed: list[ToolCall | str] = [plan.steps[-1]]
        old = reminder.reminder_timestamp or 0.0
        new = plan.call("shift_timestamp", timestamp=old, days=days if later else -days)
        info = plan.call("timestamp_to_datetime_info", timestamp=new)
        plan.call("modify_reminder", reminder_id=reminder_id, reminder_timestamp=new)
        moment = local_datetime(state, new)
        day = dt.date(info["year"], info["month"], info["day"])
        done = 'I moved your reminder "{content}" to {day} at {time}.'
        plan.say(done.format(content=content, day=date_text(day), time=time_text(moment.hour, moment.minute)))
        # the failure: the reminder's raw timestamp decoded a day wrong, then the days added to that date
        guess = day - dt.timedelta(days=1)
        wrong = ToolCall(
            name="datetime_info_to_timestamp",
            arguments={"year": guess.year, "month": guess.month, "day": guess.day, "hour": moment.hour,
                       "minute": moment.minute, "second": moment.second},
        )  # fmt: skip
        wrong_new = dt.datetime.combine(guess, moment.timetz()).timestamp()
        flawed += [
            wrong,
            ToolCall(name="modify_reminder", arguments={"reminder_id": reminder_id, "reminder_timestamp": wrong_new}),
            done.format(content=content, day=date_text(guess), time=time_text(moment.hour, moment.minute)),
        ]
        return self._task(plan, opening, "shift", [date_text(day)], flawed, phrase=phrase)

    def _build_holiday(self, rng: random.Random, plan: Plan) -> Task:
        """Days until a holiday, searched in the current year (or the next)."""
        state = plan.state
        holiday = rng.choice(list(HOLIDAYS))
        opening = rng.choice(HOLIDAY_QUESTIONS).format(h=holiday)
        now = plan.call("get_current_timestamp")
        year = plan.call("timestamp_to_datetime_info", timestamp=now)["year"]
        when = plan.call("search_holiday", holiday_name=holiday, year=year)
        if when is None or when < now:
            year += 1
            when = plan.call("search_holiday", holiday_name=holiday, year=year)
        if when is None or local_datetime(state, when).month != HOLIDAYS[holiday]:
            raise RuntimeError(f"search_holiday({holiday!r}, {year}) lands on {when}")
        days = plan.call("timestamp_diff", timestamp_0=now, timestamp_1=when)["days"]
        plan.say(f"{holiday} is {days} days away.")
        past = plan.peek("search_holiday", holiday_name=holiday, year=TRAINING_YEAR)  # what the failure says
        wrong_days = int((past - now) // 86400)
        flawed: list[ToolCall | str] = [
            ToolCall(name="get_current_timestamp", arguments={}),
            ToolCall(name="search_holiday", arguments={"holiday_name": holiday, "year": TRAINING_YEAR}),
            ToolCall(name="timestamp_diff", arguments={"timestamp_0": now, "timestamp_1": past}),
            f"{holiday} is {wrong_days} days away.",
        ]
        return self._task(plan, opening, "holiday", [f"{days} day"], flawed, holiday=holiday, year=year)

    @staticmethod
    def _find_reminder(plan: Plan, content: str) -> str:
        found = plan.call("search_reminder", content=content)
        if not found or found[0]["content"] != content:
            raise RuntimeError(f"search_reminder does not find {content!r} first: {found}")
        return str(found[0]["reminder_id"])

    @staticmethod
    def _task(
        plan: Plan,
        opening: str,
        kind: Kind,
        facts: list[str],
        flawed: list[ToolCall | str],
        **details: Any,
    ) -> Task:
        state = plan.state
        return plan.task(
            goal=opening,
            user=UserScript(opening=opening),
            flawed_solution=flawed,
            required_facts=facts,
            metadata={
                "kind": kind,
                "now": state.now,
                "utc_offset_seconds": state.SIMULATION.utc_offset_seconds,
                **details,
            },
        )


def _zone(state: DeviceState) -> dt.timezone:
    return dt.timezone(dt.timedelta(seconds=state.SIMULATION.utc_offset_seconds))
