"""Small builders of airline and retail records in tau2's db.json layout, for seeded capability tasks.

Capability envs build a handful of records per task (a few users, orders, products or flights), as
plain dicts, so that a reset costs well under a millisecond; the domain's ``load_state`` validates
them once. Every random choice comes from the ``rng`` passed in.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Any

from trace_envs.domains.airline.generator import AIRPORT_COORDINATES
from trace_envs.domains.airline.generator import CITIES as AIRLINE_CITIES
from trace_envs.domains.airline.tools import AIRPORTS
from trace_envs.domains.retail.generator import CITIES as RETAIL_CITIES
from trace_envs.domains.retail.generator import FIRST_NAMES, LAST_NAMES, STREETS

Record = dict[str, Any]

AIRPORT_CITY: dict[str, str] = dict(AIRPORTS)
CABIN_LABEL = {"basic_economy": "basic economy", "economy": "economy", "business": "business"}
CABIN_PRICE_RANGES: dict[str, tuple[int, int]] = {
    "basic_economy": (50, 100),
    "economy": (101, 200),
    "business": (201, 500),
}
"""Per-passenger prices by cabin (disjoint, so each cabin's price column is unambiguous)."""
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
"""Free checked bags per passenger by membership and cabin (the airline policy's table)."""


def unique_id(rng: random.Random, taken: set[str], prefix: str, digits: int) -> str:
    """``prefix`` + ``digits`` random digits, not in ``taken`` (added to it)."""
    while True:
        candidate = prefix + str(rng.randrange(10 ** (digits - 1), 10**digits))
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def person(rng: random.Random) -> tuple[str, str]:
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


# ----- airline ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=512)
def flight_minutes(origin: str, destination: str) -> int:
    """A plausible scheduled duration (great-circle distance at ~800 km/h plus 30 min), in 30-min steps."""
    (lat1, lon1), (lat2, lon2) = AIRPORT_COORDINATES[origin], AIRPORT_COORDINATES[destination]
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    central = math.acos(min(1.0, math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl)))
    return max(60, round((30 + 6371.0 * central / 800.0 * 60.0) / 30.0) * 30)


def clock(minutes: int) -> str:
    """``HH:MM:SS`` of a minute count since midnight, ``+1`` past midnight (tau2's arrival format)."""
    text = f"{(minutes // 60) % 24:02d}:{minutes % 60:02d}:00"
    return text + "+1" if minutes >= 24 * 60 else text


def airline_flight(number: str, origin: str, destination: str, departure_minutes: int, dates: Record) -> Record:
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": clock(departure_minutes),
        "scheduled_arrival_time_est": clock(departure_minutes + flight_minutes(origin, destination)),
        "dates": dates,
    }


def available_on(seats: dict[str, int], prices: dict[str, int]) -> Record:
    return {"status": "available", "available_seats": dict(seats), "prices": dict(prices)}


def airline_person(rng: random.Random) -> Record:
    first, last = person(rng)
    return {
        "first_name": first,
        "last_name": last,
        "dob": f"{rng.randint(1950, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
    }


def airline_user(
    rng: random.Random, taken: set[str], payment_methods: dict[str, Record], passengers: int = 0
) -> Record:
    """A profile with the given payment methods and ``passengers`` saved passengers."""
    me = airline_person(rng)
    first, last = me["first_name"], me["last_name"]
    user_id = unique_id(rng, taken, f"{first.lower()}_{last.lower()}_", 4)
    city, state, zip_prefix = rng.choice(AIRLINE_CITIES)
    return {
        "user_id": user_id,
        "name": {"first_name": first, "last_name": last},
        "address": {
            "address1": f"{rng.randint(100, 999)} {rng.choice(STREETS)}",
            "address2": f"Suite {rng.randint(100, 999)}",
            "city": city,
            "country": "USA",
            "state": state,
            "zip": f"{zip_prefix}{rng.randint(10, 99)}",
        },
        "email": f"{first.lower()}.{last.lower()}{rng.randint(1000, 9999)}@example.com",
        "dob": me["dob"],
        "payment_methods": payment_methods,
        "saved_passengers": [airline_person(rng) for _ in range(passengers)],
        "membership": rng.choice(("regular", "silver", "gold")),
        "reservations": [],
    }


def credit_card(method_id: str, brand: str, last_four: str) -> Record:
    return {"source": "credit_card", "id": method_id, "brand": brand, "last_four": last_four}


# ----- retail -------------------------------------------------------------------------------------------------
def retail_address(rng: random.Random) -> Record:
    city, state, prefix = rng.choice(RETAIL_CITIES)
    return {
        "address1": f"{rng.randrange(100, 999)} {rng.choice(STREETS)}",
        "address2": rng.choice((f"Suite {rng.randrange(100, 999)}", f"Apt {rng.randrange(1, 99)}", "")),
        "city": city,
        "country": "USA",
        "state": state,
        "zip": prefix + str(rng.randrange(100, 1000)),
    }


def retail_user(rng: random.Random, taken: set[str], payment_methods: dict[str, Record]) -> Record:
    first, last = person(rng)
    return {
        "user_id": unique_id(rng, taken, f"{first.lower()}_{last.lower()}_", 4),
        "name": {"first_name": first, "last_name": last},
        "address": retail_address(rng),
        "email": f"{first.lower()}.{last.lower()}{rng.randrange(1000, 10000)}@example.com",
        "payment_methods": payment_methods,
        "orders": [],
    }


def retail_item(product: Record, item_id: str) -> Record:
    variant = product["variants"][item_id]
    return {
        "name": product["name"],
        "product_id": product["product_id"],
        "item_id": item_id,
        "price": variant["price"],
        "options": dict(variant["options"]),
    }


def retail_order(
    rng: random.Random, taken: set[str], user: Record, items: list[Record], status: str, payment_method_id: str
) -> Record:
    """An order of ``items`` paid in full with one method; shipped orders get a fulfillment."""
    order_id = unique_id(rng, taken, "#W", 7)
    total = round(sum(item["price"] for item in items), 2)
    history = [{"transaction_type": "payment", "amount": total, "payment_method_id": payment_method_id}]
    fulfillments = []
    if status in ("processed", "delivered"):
        tracking = str(rng.randrange(10**11, 10**12))
        fulfillments.append({"tracking_id": [tracking], "item_ids": [item["item_id"] for item in items]})
    order = {
        "order_id": order_id,
        "user_id": user["user_id"],
        "address": dict(user["address"]),
        "items": items,
        "status": status,
        "fulfillments": fulfillments,
        "payment_history": history,
    }
    user["orders"].append(order_id)
    return order


def describe_options(options: dict[str, str]) -> str:
    """``color: black, size: L`` (the user's way of naming a variant)."""
    return ", ".join(f"{key}: {value}" for key, value in options.items())
