"""The built-in device scenarios: 46 tasks written for trace-envs on ToolSandbox's base world.

They cover ToolSandbox's categories (state dependency, canonicalisation, insufficient information,
single/multiple tool calls and user turns) and the two patterns the TRACE paper trains on:
permission-error recovery (low battery mode blocking wifi/cellular/location) and date-time
reasoning (relative reminders, days until a holiday, time-window searches). About a quarter are
in the ``test`` split.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .scenario import DeviceScenario, ScenarioSplit
from .templates import LOW_BATTERY, TEMPLATES

SPECS: list[tuple[str, str, dict[str, Any], str]] = [
    # permission-error recovery and other state dependencies
    ("turn_on_wifi_low_battery", "permission_turn_on", {"service": "wifi"}, "train"),
    ("turn_on_wifi_low_battery_implicit", "permission_turn_on", {"service": "wifi", "implicit": True}, "train"),
    ("turn_on_cellular_low_battery", "permission_turn_on", {"service": "cellular"}, "train"),
    ("turn_on_cellular_low_battery_implicit", "permission_turn_on", {"service": "cellular", "implicit": True}, "test"),
    ("turn_on_location_low_battery", "permission_turn_on", {"service": "location_service"}, "train"),
    ("turn_on_location_low_battery_implicit", "permission_turn_on", {"service": "location_service", "implicit": True}, "test"),
    ("text_fredrik_cellular_off", "send_message_blocked", {"contact": "Fredrik Thordendal", "content": "Band practice starts at seven tonight"}, "train"),
    ("text_john_cellular_off", "send_message_blocked", {"contact": "John Petrucci", "content": "I found your guitar pick in my car"}, "test"),
    ("text_homer_low_battery", "send_message_blocked", {"contact": "Homer S", "content": "The quarterly report will be ready on Monday", "base": LOW_BATTERY}, "train"),
    ("text_john_low_battery", "send_message_blocked", {"contact": "John Petrucci", "content": "Running late, start without me", "base": LOW_BATTERY}, "test"),
    ("temperature_here_low_battery", "weather_low_battery", {}, "train"),
    ("days_until_christmas_wifi_off", "days_until_holiday", {"holiday": "Christmas Day", "base": "base_wifi_off"}, "train"),
    ("days_until_thanksgiving_wifi_off", "days_until_holiday", {"holiday": "Thanksgiving", "base": "base_wifi_off"}, "test"),
    # date-time reasoning
    ("remind_chocolate_milk_tomorrow", "reminder_at", {"content": "Buy chocolate milk", "day_offset": 1, "hour": 17, "minute": 0, "when_text": "tomorrow at 5 PM"}, "train"),
    ("remind_plumber_in_three_days", "reminder_at", {"content": "Call the plumber", "day_offset": 3, "hour": 9, "minute": 30, "when_text": "in three days at 9:30 AM"}, "train"),
    ("remind_insurance_next_week", "reminder_at", {"content": "Renew the car insurance", "day_offset": 7, "hour": 10, "minute": 0, "when_text": "a week from today at 10 AM"}, "test"),
    ("remind_dry_cleaning_day_after_tomorrow", "reminder_at", {"content": "Pick up the dry cleaning", "day_offset": 2, "hour": 18, "minute": 15, "when_text": "the day after tomorrow at 6:15 PM"}, "train"),
    ("remind_trash_tonight", "reminder_at", {"content": "Take out the trash", "day_offset": 0, "hour": 21, "minute": 0, "when_text": "tonight at 9 PM"}, "train"),
    ("remind_garden_ask_time", "reminder_at", {"content": "Water the garden", "day_offset": 1, "hour": 8, "minute": 0, "when_text": "tomorrow at 8 AM", "ask_time": True}, "train"),
    ("remind_rent_ask_time", "reminder_at", {"content": "Send the rent", "day_offset": 4, "hour": 12, "minute": 0, "when_text": "in four days at noon", "ask_time": True}, "test"),
    ("remind_dentist_in_two_weeks", "reminder_at", {"content": "Book the dentist", "day_offset": 14, "hour": 14, "minute": 45, "when_text": "two weeks from today at 2:45 PM"}, "train"),
    ("days_until_christmas", "days_until_holiday", {"holiday": "Christmas Day"}, "train"),
    ("days_until_independence_day", "days_until_holiday", {"holiday": "Independence Day"}, "train"),
    ("days_until_veterans_day", "days_until_holiday", {"holiday": "Veterans Day"}, "test"),
    ("days_until_labor_day", "days_until_holiday", {"holiday": "Labor Day"}, "train"),
    ("days_until_memorial_day", "days_until_holiday", {"holiday": "Memorial Day"}, "train"),
    ("move_merrily_reminder_tomorrow", "reschedule_reminder", {"query": "Merrily", "day_offset": 1, "hour": 19, "minute": 0, "when_text": "tomorrow at 7 PM"}, "train"),
    ("move_bathing_dress_reminder", "reschedule_reminder", {"query": "navy bathing dress", "day_offset": 3, "hour": 11, "minute": 0, "when_text": "three days from now at 11 AM"}, "test"),
    ("reminders_next_two_hours", "upcoming_reminders", {"hours": 2}, "train"),
    ("reminders_next_day", "upcoming_reminders", {"hours": 24}, "test"),
    # canonicalisation of amounts
    ("marathon_miles_to_km", "convert_units", {"amount": 26.2, "from_unit": "mile", "to_unit": "kilometer", "question": "How many kilometers is a 26.2 mile marathon?"}, "train"),
    ("body_temperature_f_to_c", "convert_units", {"amount": 98.6, "from_unit": "fahrenheit", "to_unit": "celsius", "question": "What is 98.6 degrees Fahrenheit in Celsius?"}, "train"),
    ("weight_pounds_to_kg", "convert_units", {"amount": 150, "from_unit": "pound", "to_unit": "kilogram", "question": "How many kilograms are 150 pounds?"}, "test"),
    ("cups_to_milliliters", "convert_units", {"amount": 3, "from_unit": "cup", "to_unit": "milliliter", "question": "How many milliliters are in 3 cups?"}, "train"),
    ("dollars_k_to_euros", "convert_money", {"amount": 2048, "from_code": "USD", "to_code": "EUR", "question": "How much is $2.048k in euros?"}, "train"),
    ("pounds_sterling_to_yen", "convert_money", {"amount": 250, "from_code": "GBP", "to_code": "JPY", "question": "What's 250 British pounds in Japanese yen?"}, "test"),
    # contacts, messages, places (multiple tool calls)
    ("john_phone_number", "lookup_phone", {"contact": "John Petrucci"}, "train"),
    ("update_fredrik_phone", "change_phone", {"contact": "Fredrik Thordendal", "new_phone": "+12453344099"}, "train"),
    ("delete_john_contact", "delete_contact", {"contact": "John Petrucci"}, "test"),
    ("save_alex_as_coworker", "new_contact", {"contact": "Alex Turner", "phone": "+14155550123", "relationship": "coworker"}, "train"),
    ("homer_last_text", "last_message_from", {"contact": "Homer S"}, "train"),
    ("distance_to_golden_gate", "distance_to", {"place": "Golden Gate Bridge"}, "train"),
    ("distance_to_stanford", "distance_to", {"place": "Stanford University"}, "test"),
    # insufficient information
    ("which_city_no_location_tool", "cannot_locate", {}, "train"),
    ("text_bart_unknown_number", "cannot_text_unknown_number", {"contact": "Bart"}, "test"),
    ("text_lisa_unknown_number", "cannot_text_unknown_number", {"contact": "Lisa"}, "train"),
    ("days_until_christmas_no_clock", "cannot_count_days", {"holiday": "Christmas Day"}, "train"),
    ("yesterday_reminders_no_clock", "cannot_find_reminder_time", {}, "test"),
]  # fmt: skip
"""(scenario name, template, template arguments, split)."""


@lru_cache(maxsize=1)
def _all() -> tuple[DeviceScenario, ...]:
    return tuple(TEMPLATES[template](name, **kwargs, split=split) for name, template, kwargs, split in SPECS)


@lru_cache(maxsize=4)
def builtin_pool(split: ScenarioSplit = "all") -> tuple[DeviceScenario, ...]:
    """The shared (do not mutate) built-in scenarios of a split; :func:`builtin_scenarios` gives copies."""
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
    return tuple(s for s in _all() if split == "all" or s.split == split)


def builtin_scenarios(split: ScenarioSplit = "all") -> list[DeviceScenario]:
    """The shipped scenarios of one split (``"train"``, ``"test"``) or all of them, in a fixed order."""
    return [s.model_copy(deep=True) for s in builtin_pool(split)]
