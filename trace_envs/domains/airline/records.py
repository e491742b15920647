"""Small airline accounts in tau2's db.json layout, built from a task's ``rng`` for the capability envs.

Two builders: :class:`AirlineRecords` (a user with reservations and only the flights they use, for the
multi-step and precondition envs) and the record functions (``airline_user``, ``airline_flight`` ...) that
the structured-data and tool-precision envs compose. The layouts are the real ``FlightDB``'s (the domain
validates them on reset); the policy's tables (free bags, cabins) have one copy here.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from trace_envs.domains.airline.generator import AIRPORT_COORDINATES, CITIES, FIRST_NAMES, LAST_NAMES, STREETS
from trace_envs.domains.airline.generator import CABIN_PRICE_RANGES as GENERATOR_CABIN_PRICES
from trace_envs.domains.airline.tools import AIRPORTS, NEW_CERTIFICATE_IDS, NEW_RESERVATION_IDS
from trace_envs.domains.retail.generator import STREETS as RETAIL_STREETS
from trace_envs.domains.tau2_records import (
    Record,
    draw_code,
    draw_int,
    person,
    pick,
    stamp,
    unique_id,
)

AIRLINE_NOW = datetime(2024, 5, 15, 15, 0, 0)
"""The airline policy's "now" (2024-05-15 15:00 EST): every eligibility decision is relative to it."""

FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
"""Free checked bags per passenger by membership tier and cabin (the airline policy's table)."""

CABINS = ("basic_economy", "economy", "business")
RESERVATION_CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""The characters of a :func:`one_way_reservation` code (no I, O, 0 or 1)."""
CABIN_LABEL = {"basic_economy": "basic economy", "economy": "economy", "business": "business"}
"""How a cabin is said to the user."""
AIRPORT_CITY: dict[str, str] = dict(AIRPORTS)
CABIN_PRICE_RANGES: dict[str, tuple[int, int]] = {
    "basic_economy": (50, 100),
    "economy": (101, 200),
    "business": (201, 500),
}
"""Per-passenger prices by cabin (disjoint, so each cabin's price column is unambiguous). ``AirlineRecords``
keeps the generator's (overlapping) ranges, so its seeds keep their tasks."""


# ----- one account with reservations ---------------------------------------------------------------------
class AirlineRecords:
    """A small ``FlightDB`` in db.json layout: users, their reservations and only the flights they use.

    ``AirlineRecords(rng)`` starts empty; every id it makes is unique within the instance and avoids the ids
    the tools hand out for new reservations and certificates. "Today" is ``AIRLINE_NOW`` (2024-05-15 15:00 EST,
    the policy's clock). Records are plain dicts in ``flights``, ``users`` and ``reservations``: change them as
    the task needs until the state goes to ``Plan`` (add a flight with ``records.flights[number] =
    airline_flight(number, origin, destination, departure_minutes, {date: available_on(seats, prices)})``,
    its number unique, e.g. ``HAT`` and three digits not in ``records.flights``). ``state()`` returns these same
    dicts, not a copy, so once ``Plan(AIRLINE, records.state())`` is made, leave them alone: a later change
    would alter the recorded initial state but not the state the reference runs on.
    """

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.flights: dict[str, dict[str, Any]] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.reservations: dict[str, dict[str, Any]] = {}
        self._taken: set[str] = {*NEW_RESERVATION_IDS, *NEW_CERTIFICATE_IDS}

    def _unique(self, make: Any) -> str:
        while True:
            value: str = make()
            if value not in self._taken:
                self._taken.add(value)
                return value

    def person(self) -> dict[str, str]:
        """A passenger not added anywhere: ``first_name``, ``last_name``, ``dob`` (``YYYY-MM-DD``, 1950-2004)."""
        rng = self.rng
        dob = datetime(1950, 1, 1) + timedelta(days=draw_int(rng, 0, 365 * 55 - 1))
        return {
            "first_name": pick(rng, FIRST_NAMES),
            "last_name": pick(rng, LAST_NAMES),
            "dob": dob.date().isoformat(),
        }

    def add_user(self, membership: str | None = None) -> dict[str, Any]:
        """A customer with one credit card, maybe a gift card and a certificate, and saved passengers.

        ``membership`` is ``regular``, ``silver`` or ``gold`` (``None``: drawn). Returns the user dict
        (``user_id``, ``name``, ``address``, ``email``, ``dob``, ``payment_methods``, ``saved_passengers``,
        ``membership``, ``reservations``: ids, filled by ``add_reservation``), added to the state.
        """
        rng = self.rng
        first, last = pick(rng, FIRST_NAMES), pick(rng, LAST_NAMES)
        user_id = self._unique(lambda: f"{first.lower()}_{last.lower()}_{draw_int(rng, 1000, 9999)}")
        card = self._unique(lambda: f"credit_card_{draw_int(rng, 1_000_000, 9_999_999)}")
        methods: dict[str, dict[str, Any]] = {
            card: {"source": "credit_card", "id": card, "brand": pick(rng, ("visa", "mastercard")),
                   "last_four": f"{draw_int(rng, 0, 9999):04d}"},
        }  # fmt: skip
        if rng.random() < 0.6:
            gift = self._unique(lambda: f"gift_card_{draw_int(rng, 1_000_000, 9_999_999)}")
            methods[gift] = {"source": "gift_card", "id": gift, "amount": float(draw_int(rng, 0, 300))}
        if rng.random() < 0.4:
            cert = self._unique(lambda: f"certificate_{draw_int(rng, 1_000_000, 9_999_999)}")
            methods[cert] = {"source": "certificate", "id": cert, "amount": pick(rng, (100.0, 150.0, 250.0))}
        city, state, zip_prefix = pick(rng, CITIES)
        user = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": {"address1": f"{draw_int(rng, 100, 999)} {pick(rng, STREETS)}",
                        "address2": f"Suite {draw_int(rng, 100, 999)}", "city": city, "country": "USA", "state": state,
                        "zip": f"{zip_prefix}{draw_int(rng, 0, 99):02d}"},
            "email": f"{first.lower()}.{last.lower()}{draw_int(rng, 1000, 9999)}@example.com",
            "dob": self.person()["dob"],
            "payment_methods": methods,
            "saved_passengers": [self.person() for _ in range(pick(rng, (0, 1, 1, 2)))],
            "membership": membership or pick(rng, ("regular", "silver", "gold")),
            "reservations": [],
        }  # fmt: skip
        self.users[user_id] = user
        return user

    @staticmethod
    def credit_card(user: dict[str, Any]) -> str:
        """The id of the user's credit card (``credit_card_1234567``); raises ``StopIteration`` if it has none."""
        methods: dict[str, dict[str, Any]] = user["payment_methods"]
        return next(m for m, v in methods.items() if v["source"] == "credit_card")

    def _flight(self, origin: str, destination: str) -> str:
        rng = self.rng
        number = self._unique(lambda: f"HAT{draw_int(rng, 1, 299):03d}")
        hour = draw_int(rng, 5, 18)
        self.flights[number] = {
            "flight_number": number,
            "origin": origin,
            "destination": destination,
            "scheduled_departure_time_est": f"{hour:02d}:00:00",
            "scheduled_arrival_time_est": f"{hour + draw_int(rng, 1, 5):02d}:00:00",
            "dates": {},
        }
        return number

    def add_reservation(
        self,
        user: dict[str, Any],
        *,
        cabin: str,
        created_at: datetime,
        insurance: str,
        cancelled_segment: bool = False,
        passengers: int | None = None,
    ) -> dict[str, Any]:
        """A future trip (one way or round trip, every date after today) paid in full by the credit card.

        ``cancelled_segment`` marks one of its flight dates as cancelled by the airline. Checked bags stay
        within the free allowance (no paid bags). ``cabin`` is one of ``CABINS``; ``insurance`` is ``"yes"`` or
        ``"no"`` (30 per passenger); ``created_at`` a datetime, stored in tau2's format. Returns the reservation
        dict (``reservation_id``: 6 letters and digits, ``flights``: segments with ``flight_number``, ``date``,
        ``price``, ``passengers``, ``payment_history``, ``total_baggages``, ...), its flights added to the state
        and its id to the user's ``reservations``; raises ``KeyError`` for an unknown cabin or membership.
        """
        rng = self.rng
        origin, destination = rng.sample([code for code, _ in AIRPORTS], 2)
        round_trip = rng.random() < 0.5
        out_day = AIRLINE_NOW.date() + timedelta(days=draw_int(rng, 2, 12))
        legs = [(self._flight(origin, destination), out_day)]
        if round_trip:
            legs.append((self._flight(destination, origin), out_day + timedelta(days=draw_int(rng, 1, 6))))
        count = passengers or pick(rng, (1, 1, 2, 2, 3))
        people = [
            {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}
        ]
        people += [dict(p) for p in user["saved_passengers"]]
        while len(people) < count:
            people.append(self.person())
        people = people[:count]
        segments = []
        for number, day in legs:
            prices = {c: draw_int(rng, *GENERATOR_CABIN_PRICES[c]) for c in CABINS}
            self.flights[number]["dates"][day.isoformat()] = {
                "status": "available",
                "available_seats": {c: draw_int(rng, 2, 20) for c in CABINS},
                "prices": prices,
            }
            flight = self.flights[number]
            segments.append({"flight_number": number, "origin": flight["origin"], "destination": flight["destination"],
                             "date": day.isoformat(), "price": prices[cabin]})  # fmt: skip
        if cancelled_segment:
            number, day = pick(rng, legs)
            self.flights[number]["dates"][day.isoformat()] = {"status": "cancelled"}
        total = sum(s["price"] for s in segments) * count + (30 * count if insurance == "yes" else 0)
        free = FREE_BAGS[user["membership"]][cabin] * count
        reservation_id = self._unique(lambda: draw_code(rng))
        reservation = {
            "reservation_id": reservation_id,
            "user_id": user["user_id"],
            "origin": origin,
            "destination": destination,
            "flight_type": "round_trip" if round_trip else "one_way",
            "cabin": cabin,
            "flights": segments,
            "passengers": people,
            "payment_history": [{"payment_id": self.credit_card(user), "amount": total}],
            "created_at": stamp(created_at),
            "total_baggages": min(free, draw_int(rng, 0, count)),
            "nonfree_baggages": 0,
            "insurance": insurance,
        }
        self.reservations[reservation_id] = reservation
        user["reservations"].append(reservation_id)
        return reservation

    def state(self) -> dict[str, Any]:
        """The db.json document (``flights``, ``users``, ``reservations``): pass it to ``Plan(AIRLINE, ...)``."""
        return {"flights": self.flights, "users": self.users, "reservations": self.reservations}


# ----- record functions ------------------------------------------------------------------------------------
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
    """A flight in db.json layout whose arrival time follows from the route's duration.

    ``origin`` and ``destination`` are airport codes of the domain (``KeyError`` otherwise);
    ``departure_minutes`` counts from midnight EST; ``dates`` maps ``YYYY-MM-DD`` to a date record. Returns
    the flight dict (times as ``HH:MM:SS``, an arrival past midnight with ``+1``); nothing is added to a state.
    """
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": clock(departure_minutes),
        "scheduled_arrival_time_est": clock(departure_minutes + flight_minutes(origin, destination)),
        "dates": dates,
    }


def available_on(seats: dict[str, int], prices: dict[str, int]) -> Record:
    """One date of a flight, open for booking with these seats and prices."""
    return {"status": "available", "available_seats": dict(seats), "prices": dict(prices)}


def airline_person(rng: random.Random) -> Record:
    """A passenger (name and date of birth)."""
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
    city, state, zip_prefix = rng.choice(CITIES)
    return {
        "user_id": user_id,
        "name": {"first_name": first, "last_name": last},
        "address": {
            "address1": f"{rng.randint(100, 999)} {rng.choice(RETAIL_STREETS)}",
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


def one_way_reservation(
    rng: random.Random, taken: set[str], user: Record, number: str, party: list[Record] | None, payment_id: str
) -> tuple[Record, Record]:
    """A new flight ``number`` and the user's one-way reservation on it for ``party`` (None: 1-3 new people), paid
    with ``payment_id``: its free bags used and maybe one paid bag; the code is new (added to ``taken``)."""
    origin, destination = rng.sample(sorted(AIRPORT_CITY), 2)
    day, cabin = f"2024-05-{rng.randint(16, 30)}", rng.choice(("basic_economy", "economy", "business"))
    prices = {c: rng.randint(*CABIN_PRICE_RANGES[c]) for c in CABIN_PRICE_RANGES}
    seats = {c: rng.randint(0, 20) for c in CABIN_PRICE_RANGES}
    minutes = rng.randint(6, 18) * 60
    flight = airline_flight(number, origin, destination, minutes, {day: available_on(seats, prices)})
    count = len(party) if party is not None else rng.randint(1, 3)
    people = party if party is not None else [airline_person(rng) for _ in range(count)]
    free, extra = FREE_BAGS[user["membership"]][cabin] * count, rng.randint(0, 1)
    code = ""  # the reservation id: six characters, new, and not a "HATHA..." id (tau2's flight numbers look so)
    while not code or code in taken or code.startswith("HATHA"):
        code = "".join(rng.choice(RESERVATION_CODE_CHARS) for _ in range(6))
    taken.add(code)
    route = {"origin": origin, "destination": destination}
    reservation: Record = {"reservation_id": code, "user_id": user["user_id"], **route, "flight_type": "one_way"}
    reservation["cabin"] = cabin
    reservation["flights"] = [{"flight_number": number, **route, "date": day, "price": prices[cabin]}]
    reservation["passengers"] = people
    reservation["payment_history"] = [{"payment_id": payment_id, "amount": prices[cabin] * count + 50 * extra}]
    when = f"{rng.randint(1, 14):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    reservation["created_at"] = f"2024-05-{when}:00"
    reservation["total_baggages"], reservation["nonfree_baggages"] = free + extra, extra
    reservation["insurance"] = rng.choice(("yes", "no"))
    return flight, reservation
