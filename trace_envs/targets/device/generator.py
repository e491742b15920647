"""Seeded scenario generator: a random world (``generate_device_world``) and a random template over it.

Covers ToolSandbox's categories: state dependency (permission errors from low battery mode,
connection errors from cellular/wifi off), canonicalisation (relative dates and times, units,
currency), insufficient information (a needed tool is missing) and multiple tool calls.
``generate_scenario(random.Random(s))`` is a pure function of ``s``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from trace_envs.domains.device import DeviceState, generate_device_world
from trace_envs.domains.device.world import random_phone

from . import templates as t
from .scenario import DeviceScenario

LOW_BATTERY_SETTINGS = {"low_battery_mode": True, "wifi": False, "cellular": False, "location_service": False}
_REMINDER_TASKS = [
    "Buy chocolate milk", "Call the plumber", "Renew the car insurance", "Pick up the kids", "Book a haircut",
    "Pay the phone bill", "Email the landlord", "Bring the laptop charger", "Order more coffee beans",
]  # fmt: skip
_WHEN = [  # (day offset, hour, minute, phrase)
    (0, 21, 0, "tonight at 9 PM"), (1, 17, 0, "tomorrow at 5 PM"), (1, 8, 30, "tomorrow at 8:30 AM"),
    (2, 12, 0, "the day after tomorrow at noon"), (3, 9, 0, "in three days at 9 AM"),
    (7, 10, 0, "a week from today at 10 AM"), (5, 18, 45, "five days from now at 6:45 PM"),
]  # fmt: skip
_HOLIDAYS = [
    "Christmas Day",
    "Independence Day",
    "Thanksgiving",
    "Labor Day",
    "Memorial Day",
    "Veterans Day",
    "Columbus Day",
]
_UNITS = [
    ("mile", "kilometer", "How many kilometers is {a} miles?"), ("kilogram", "pound", "How many pounds is {a} kg?"),
    ("fahrenheit", "celsius", "What is {a} degrees Fahrenheit in Celsius?"), ("liter", "gallon", "How many gallons is {a} liters?"),
    ("foot", "meter", "How many meters is {a} feet?"), ("hour", "minute", "How many minutes are in {a} hours?"),
]  # fmt: skip
_CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CAD", "CHF", "AUD", "INR"]
_MESSAGES = [
    "Dinner is at eight",
    "I'm on my way",
    "The meeting moved to Friday",
    "Can't wait for the trip",
    "Happy birthday",
]


def _future_hours(world: DeviceState) -> int | None:
    now = world.now
    upcoming = [r.reminder_timestamp for r in world.REMINDER if r.reminder_timestamp and r.reminder_timestamp > now]
    if not upcoming:
        return None
    return int((min(upcoming) - now) // 3600) + 1 + 2


def _pick(rng: random.Random) -> Callable[[random.Random], DeviceScenario]:
    makers: list[Callable[[random.Random], DeviceScenario]] = [
        _permission, _send_blocked, _reminder, _reminder, _holiday, _reschedule, _upcoming, _units, _money,
        _lookup, _change_phone, _delete, _new_contact, _insufficient,
    ]  # fmt: skip
    return rng.choice(makers)


def _permission(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng, settings=LOW_BATTERY_SETTINGS)
    service = rng.choice(sorted(t.SERVICES))
    return t.permission_turn_on(
        "generated_permission_turn_on", service, base=None, world=world, implicit=rng.random() < 0.5
    )


def _send_blocked(rng: random.Random) -> DeviceScenario:
    low = rng.random() < 0.5
    world = generate_device_world(rng, settings=LOW_BATTERY_SETTINGS if low else {"cellular": False})
    contact = rng.choice(world.CONTACT[1:]).name or ""
    return t.send_message_blocked(
        "generated_send_message_blocked", contact, rng.choice(_MESSAGES), base=None, world=world
    )


def _reminder(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    day, hour, minute, phrase = rng.choice(_WHEN)
    return t.reminder_at(
        "generated_reminder_at", rng.choice(_REMINDER_TASKS), day, hour, minute, phrase, base=None, world=world,
        ask_time=rng.random() < 0.3,
    )  # fmt: skip


def _holiday(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng, settings={"wifi": False} if rng.random() < 0.4 else None)
    return t.days_until_holiday("generated_days_until_holiday", rng.choice(_HOLIDAYS), base=None, world=world)


def _reschedule(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng, n_reminders=1)
    day, hour, minute, phrase = rng.choice(_WHEN[1:])
    query = world.REMINDER[0].content or ""
    return t.reschedule_reminder(
        "generated_reschedule_reminder", query, day, hour, minute, phrase, base=None, world=world
    )


def _upcoming(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng, n_reminders=rng.randint(2, 4))
    hours = _future_hours(world)
    if hours is None:
        return _reminder(rng)
    return t.upcoming_reminders("generated_upcoming_reminders", hours, base=None, world=world)


def _units(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    source, target, question = rng.choice(_UNITS)
    amount = rng.choice([rng.randint(2, 300), round(rng.uniform(1, 100), 1)])
    return t.convert_units(
        "generated_convert_units", amount, source, target, question.format(a=amount), base=None, world=world
    )


def _money(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    source, target = rng.sample(_CURRENCIES, 2)
    amount = rng.randint(5, 5000)
    question = f"How much is {amount} {source} in {target}?"
    return t.convert_money("generated_convert_money", amount, source, target, question, base=None, world=world)


def _lookup(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    return t.lookup_phone("generated_lookup_phone", rng.choice(world.CONTACT[1:]).name or "", base=None, world=world)


def _change_phone(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    contact = rng.choice(world.CONTACT[1:]).name or ""
    return t.change_phone("generated_change_phone", contact, random_phone(rng), base=None, world=world)


def _delete(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    return t.delete_contact(
        "generated_delete_contact", rng.choice(world.CONTACT[1:]).name or "", base=None, world=world
    )


def _new_contact(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng, n_contacts=3)
    taken = {c.name for c in world.CONTACT}
    name = rng.choice(
        [n for n in ("Alex Turner", "Billie Holm", "Chris Vega", "Dana Scully", "Eli Roth") if n not in taken]
    )
    relationship = rng.choice(["coworker", "dentist", "neighbor", "cousin"])
    return t.new_contact("generated_new_contact", name, random_phone(rng), relationship, base=None, world=world)


def _insufficient(rng: random.Random) -> DeviceScenario:
    world = generate_device_world(rng)
    kind = rng.randrange(4)
    if kind == 0:
        return t.cannot_locate("generated_cannot_locate", base=None, world=world)
    if kind == 1:
        world.settings.cellular = False
        stranger = rng.choice(["Bart", "Lisa", "Morgan", "Sasha"])
        return t.cannot_text_unknown_number("generated_cannot_text", stranger, base=None, world=world)
    if kind == 2:
        return t.cannot_count_days("generated_cannot_count_days", rng.choice(_HOLIDAYS), base=None, world=world)
    return t.cannot_find_reminder_time("generated_cannot_find_reminder_time", base=None, world=world)


def generate_scenario(rng: random.Random) -> DeviceScenario:
    """One random scenario over one random world; every choice comes from ``rng``."""
    return _pick(rng)(rng)
