"""Seeded draws and text helpers shared by the airline and retail record builders.

Capability envs build a handful of records per task in tau2's db.json layout, as plain dicts, so a reset
costs well under a millisecond. ``trace_envs.domains.airline.records`` and
``trace_envs.domains.retail.records`` build them with these helpers; every random choice comes from the
``rng`` passed in.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from trace_envs.domains.retail.generator import FIRST_NAMES, LAST_NAMES

Record = dict[str, Any]
"""One record in db.json layout (a user, an order, a flight ...)."""

ID_ALPHABET = string.ascii_uppercase + string.digits

T = TypeVar("T")


def draw_int(rng: random.Random, low: int, high: int) -> int:
    """A uniform integer in [low, high] from one ``rng.random()`` (several times cheaper than ``randint``)."""
    return low + int(rng.random() * (high - low + 1))


def draw_code(rng: random.Random) -> str:
    """A six-character reservation code (upper-case letters and digits) from one draw."""
    number = int(rng.random() * 36**6)
    return "".join(ID_ALPHABET[(number // 36**i) % 36] for i in range(6))


def pick(rng: random.Random, options: Sequence[T]) -> T:
    """One of ``options`` from one ``rng.random()`` draw."""
    return options[int(rng.random() * len(options))]


def unique_id(rng: random.Random, taken: set[str], prefix: str, digits: int) -> str:
    """``prefix`` + ``digits`` random digits, not in ``taken`` (added to it)."""
    while True:
        candidate = prefix + str(rng.randrange(10 ** (digits - 1), 10**digits))
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def person(rng: random.Random) -> tuple[str, str]:
    """A first and last name."""
    return rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)


def near_miss_digits(rng: random.Random, digits: str) -> str:
    """The same digits with two neighbours swapped (a different string), e.g. ``4821`` -> ``4812``."""
    for _ in range(8):
        i = rng.randrange(len(digits) - 1)
        if digits[i] != digits[i + 1]:
            return digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :]
    last = str((int(digits[-1]) + 1) % 10)
    return digits[:-1] + last


def four_digits(rng: random.Random) -> str:
    """Four digits with at least two different neighbours (so a near miss exists)."""
    while True:
        value = f"{rng.randrange(10_000):04d}"
        if any(value[i] != value[i + 1] for i in range(3)):
            return value


def price_with_cents(rng: random.Random, low: float, high: float) -> float:
    """A price whose two decimals are both shown by ``repr`` (cents not a multiple of 10)."""
    dollars = rng.randrange(int(low), int(high))
    cents = rng.choice([c for c in range(1, 100) if c % 10])
    return dollars + cents / 100


def credit_card(method_id: str, brand: str, last_four: str) -> Record:
    """A credit-card payment method record (the same layout in both domains)."""
    return {"source": "credit_card", "id": method_id, "brand": brand, "last_four": last_four}


def stamp(moment: datetime) -> str:
    """A timestamp in db.json's form (``2024-05-01T10:00:00``)."""
    return moment.isoformat(timespec="seconds")


def money(amount: float) -> str:
    """An amount as the oracle says it: whole dollars without decimals, cents with two."""
    return f"${amount:.0f}" if float(amount).is_integer() else f"${amount:.2f}"


def named_card(methods: dict[str, Any], card: Record) -> str:
    """The id of the credit card a customer names by brand and last four digits (``card``), among a profile's
    payment methods as ``get_user_details`` returns them (either domain)."""
    for method_id, method in methods.items():
        if method.source == "credit_card" and (method.brand, method.last_four) == (card["brand"], card["last_four"]):
            return method_id
    raise LookupError(f"no {card['brand']} card ending in {card['last_four']} among {list(methods)}")
