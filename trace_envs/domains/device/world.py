"""Worlds to start from: ToolSandbox's base world (and its settings variants) and a seeded generator.

The base world has the reference's rows (device, four contacts, five messages, three reminders).
Upstream computes its relative times from the wall clock when scenarios are built; here they are
relative to a fixed simulated "now" (default :data:`BASE_NOW`, the timestamp of the TRACE paper's
datetime example, 2026-03-26 07:57:53 UTC).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from .state import (
    ContactRow,
    DeviceState,
    MessageRow,
    ReminderRow,
    SettingRow,
    Simulation,
    duuid,
)

BASE_NOW = 1774511873.0
BASE_LATITUDE, BASE_LONGITUDE = 37.334606, -122.009102

BASE_VARIANTS: dict[str, dict[str, bool]] = {
    "base": {},
    "base_wifi_off": {"wifi": False},
    "base_location_service_off": {"location_service": False},
    "base_cellular_off": {"cellular": False},
    "base_wifi_off_location_service_off": {"wifi": False, "location_service": False},
    "base_wifi_off_cellular_off": {"wifi": False, "cellular": False},
    "base_location_service_off_cellular_off": {"location_service": False, "cellular": False},
    "base_wifi_off_location_service_off_cellular_off": {"wifi": False, "location_service": False, "cellular": False},
    "base_low_battery_mode_on_wifi_off_location_service_off_cellular_off": {
        "low_battery_mode": True,
        "wifi": False,
        "location_service": False,
        "cellular": False,
    },
}
"""ToolSandbox's base-world variants: the same data with settings flipped."""


def _ago(now: float, days: int = 0, hours: int = 0, minutes: int = 0, seconds: int = 0) -> float:
    return now - dt.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds).total_seconds()


def build_base_world(variant: str = "base", now: float = BASE_NOW, utc_offset_seconds: int = 0) -> DeviceState:
    """The reference's base world (or one of :data:`BASE_VARIANTS`) at simulated time ``now``."""
    if variant not in BASE_VARIANTS:
        raise ValueError(f"unknown base world {variant!r}; choose one of {sorted(BASE_VARIANTS)}")
    tomas, fredrik, john, homer = (duuid(n) for n in ("Tomas Haake", "Fredrik Thordendal", "John Petrucci", "Homer S"))
    settings = SettingRow(
        device_id=duuid("my_phone"),
        cellular=True,
        wifi=True,
        location_service=True,
        low_battery_mode=False,
        latitude=BASE_LATITUDE,
        longitude=BASE_LONGITUDE,
    )
    for key, value in BASE_VARIANTS[variant].items():
        setattr(settings, key, value)
    contacts = [
        ContactRow(person_id=tomas, name="Tomas Haake", phone_number="+11233344455", relationship="self", is_self=True),
        ContactRow(
            person_id=fredrik,
            name="Fredrik Thordendal",
            phone_number="+12453344098",
            relationship="friend",
            is_self=False,
        ),
        ContactRow(
            person_id=john, name="John Petrucci", phone_number="+1234560987", relationship="friend", is_self=False
        ),
        ContactRow(person_id=homer, name="Homer S", phone_number="+10000000000", relationship="boss", is_self=False),
    ]
    stranger = "+18307976530"
    messages = [
        MessageRow(message_id=duuid("message_0"), sender_person_id=None, sender_phone_number=stranger,
                   recipient_person_id=tomas, recipient_phone_number="+11233344455",
                   content="Hey kid, you want some GPU?", creation_timestamp=_ago(now, 3, 4, 5, 6)),
        MessageRow(message_id=duuid("message_1"), sender_person_id=tomas, sender_phone_number="+11233344455",
                   recipient_person_id=None, recipient_phone_number=stranger,
                   content="No leave me alone", creation_timestamp=_ago(now, 3, 3, 5, 6)),
        MessageRow(message_id=duuid("message_4"), sender_person_id=homer, sender_phone_number="+10000000000",
                   recipient_person_id=tomas, recipient_phone_number="+11233344455",
                   content="How's it going", creation_timestamp=_ago(now, 0, 1, 3, 3)),
        MessageRow(message_id=duuid("message_2"), sender_person_id=tomas, sender_phone_number="+11233344455",
                   recipient_person_id=homer, recipient_phone_number="+10000000000",
                   content="Things are proceeding as expected", creation_timestamp=_ago(now, 0, 1, 2, 3)),
        MessageRow(message_id=duuid("message_4"), sender_person_id=homer, sender_phone_number="+10000000000",
                   recipient_person_id=tomas, recipient_phone_number="+11233344455",
                   content="Good, keep me posted", creation_timestamp=_ago(now, 0, 0, 1, 2)),
    ]  # fmt: skip
    reminders = [
        ReminderRow(reminder_id=duuid("reminder_0"), content="Look for Company SF tickets",
                    creation_timestamp=_ago(now, 3), reminder_timestamp=_ago(now, 1)),
        ReminderRow(reminder_id=duuid("reminder_1"), content="Buy tickets for Merrily next week",
                    creation_timestamp=_ago(now, 1), reminder_timestamp=_ago(now, minutes=1)),
        ReminderRow(reminder_id=duuid("reminder_2"), content="Buy a nice rich navy bathing dress",
                    creation_timestamp=_ago(now, hours=1), reminder_timestamp=_ago(now, hours=-1),
                    latitude=37.3237926356735, longitude=-122.03961770355414),
    ]  # fmt: skip
    return DeviceState(
        SETTING=[settings],
        CONTACT=contacts,
        MESSAGING=messages,
        REMINDER=reminders,
        SIMULATION=Simulation(current_timestamp=now, utc_offset_seconds=utc_offset_seconds),
    )


FIRST_NAMES = [
    "Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Luca",
    "Maya", "Nils", "Olga", "Priya", "Quentin", "Rosa", "Sami", "Tara", "Uma", "Victor", "Wen", "Yusuf", "Zara",
]  # fmt: skip
LAST_NAMES = [
    "Abbott", "Berg", "Castillo", "Dube", "Eriksen", "Fontaine", "Gupta", "Hartmann", "Ito", "Jovanovic",
    "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn", "Rossi", "Silva", "Tanaka",
]  # fmt: skip
RELATIONSHIPS = ["friend", "sister", "brother", "mother", "father", "boss", "coworker", "neighbor", "cousin", "partner"]
MESSAGE_TEXTS = [
    "Are we still on for lunch?", "Running ten minutes late", "Can you send me the slides",
    "Happy birthday!", "The package arrived today", "Call me when you get a chance", "See you at the gym",
    "Did you feed the cat?", "Meeting moved to Thursday", "Thanks for dinner last night",
    "Don't forget the concert tickets", "I left my keys at your place",
]  # fmt: skip
REMINDER_TEXTS = [
    "Pick up dry cleaning", "Renew passport", "Water the plants", "Pay the electricity bill",
    "Book a dentist appointment", "Buy groceries", "Call the landlord", "Return library books",
    "Submit the expense report", "Buy a birthday present for mom", "Take out the recycling", "Refill prescription",
]  # fmt: skip


def random_phone(rng: random.Random) -> str:
    """A +1 number with a non-zero area code (parses like upstream's contacts do): ``"+1"`` and ten digits,
    no spaces or dashes, e.g. ``"+14155550123"`` (how contacts store ``phone_number``)."""
    return "+1" + str(rng.randint(200, 989)) + "".join(str(rng.randint(0, 9)) for _ in range(7))


def generate_device_world(
    rng: random.Random,
    *,
    n_contacts: int | None = None,
    n_messages: int | None = None,
    n_reminders: int | None = None,
    settings: dict[str, Any] | None = None,
    now: float | None = None,
    utc_offset_seconds: int | None = None,
) -> DeviceState:
    """A seeded random world: self + contacts, messages with them, reminders around now, settings, clock.

    Every choice comes from ``rng``; ``settings`` overrides the (all-on) defaults, e.g.
    ``{"low_battery_mode": True, "wifi": False, "cellular": False, "location_service": False}``.
    Counts left ``None`` are drawn (3-7 contacts besides the user, 2-6 messages, 1-4 reminders); ``now`` is a
    UNIX timestamp (default: drawn in 2025-2027) and ``utc_offset_seconds`` the local offset (default 0).
    Returns a new ``DeviceState``: ``CONTACT[0]`` is the user (``is_self``), phone numbers as
    ``random_phone`` makes them, messages in the past, reminders from 3 days before to 14 after ``now``.
    Raises ``ValueError`` naming the settings for an unknown setting key.
    """
    if now is None:
        start = dt.datetime(2025, 1, 1, tzinfo=dt.UTC).timestamp()
        now = float(rng.randint(int(start), int(start) + 3 * 365 * 86400))
    offset = utc_offset_seconds if utc_offset_seconds is not None else 0
    n_contacts = n_contacts if n_contacts is not None else rng.randint(3, 7)
    n_messages = n_messages if n_messages is not None else rng.randint(2, 6)
    n_reminders = n_reminders if n_reminders is not None else rng.randint(1, 4)
    names = [
        f"{f} {last}"
        for f, last in zip(rng.sample(FIRST_NAMES, n_contacts + 1), rng.sample(LAST_NAMES, n_contacts + 1), strict=True)
    ]
    phones: list[str] = []
    while len(phones) < n_contacts + 1:
        phone = random_phone(rng)
        if phone not in phones:
            phones.append(phone)
    state = DeviceState(
        SETTING=[
            SettingRow(
                device_id=duuid(f"device-{rng.randint(0, 10**9)}"),
                cellular=True,
                wifi=True,
                location_service=True,
                low_battery_mode=False,
                latitude=round(BASE_LATITUDE + rng.uniform(-0.02, 0.02), 6),
                longitude=round(BASE_LONGITUDE + rng.uniform(-0.02, 0.02), 6),
            )
        ],
        SIMULATION=Simulation(current_timestamp=now, utc_offset_seconds=offset, backend_seed=rng.randint(0, 10**6)),
    )
    for key, value in (settings or {}).items():
        if not hasattr(state.settings, key):
            raise ValueError(f"unknown setting {key!r}; settings are {list(SettingRow.model_fields)}")
        setattr(state.settings, key, value)
    relationships = rng.sample(RELATIONSHIPS, min(n_contacts, len(RELATIONSHIPS)))
    for i, (name, phone) in enumerate(zip(names, phones, strict=True)):
        is_self = i == 0
        state.CONTACT.append(
            ContactRow(
                person_id=state.new_id("contact"),
                name=name,
                phone_number=phone,
                relationship="self" if is_self else relationships[(i - 1) % len(relationships)],
                is_self=is_self,
            )
        )
    me = state.CONTACT[0]
    others = state.CONTACT[1:]
    times = sorted(rng.randint(60, 10 * 86400) for _ in range(n_messages))[::-1]
    for ago, text in zip(times, rng.sample(MESSAGE_TEXTS, n_messages), strict=True):
        other = rng.choice(others)
        outgoing = rng.random() < 0.5
        sender, recipient = (me, other) if outgoing else (other, me)
        state.MESSAGING.append(
            MessageRow(
                message_id=state.new_id("message"),
                sender_person_id=sender.person_id,
                sender_phone_number=sender.phone_number,
                recipient_person_id=recipient.person_id,
                recipient_phone_number=recipient.phone_number,
                content=text,
                creation_timestamp=now - ago,
            )
        )
    for text in rng.sample(REMINDER_TEXTS, n_reminders):
        created = now - rng.randint(3600, 7 * 86400)
        state.REMINDER.append(
            ReminderRow(
                reminder_id=state.new_id("reminder"),
                content=text,
                creation_timestamp=float(created),
                reminder_timestamp=float(now + rng.randint(-3 * 86400, 14 * 86400)),
            )
        )
    return state
