"""Seeded generator of realistic airline databases in tau2's ``FlightDB`` format (no data file needed).

The records follow the shape and value ranges of tau2's airline data: flights ``HAT001``… between the
20 airports ``list_all_airports`` knows, on the hour, durations from great-circle distance (arrivals
past midnight carry ``+1``); per-date status relative to "now" (landed/cancelled before today; landed,
flying, on time or delayed today; available after, with 0–20 seats and prices of 50–100 / 100–200 /
200–500 dollars per cabin); users with credit cards, gift cards and certificates, saved passengers
and a membership tier; reservations made of real flight segments (direct or one stop, one way or
round trip) paid in full by one saved method, with seats taken on bookable dates.

Every random choice comes from the ``rng`` passed in, so the same seed gives the same database (and
canonical hash) in any process. The result passes :class:`FlightDB` validation and every tool works on it.
"""

from __future__ import annotations

import math
import random
import string
from datetime import date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .data_model import CABIN_CLASSES, FlightDB
from .tools import AIRPORTS, NEW_CERTIFICATE_IDS, NEW_RESERVATION_IDS

AIRPORT_COORDINATES: dict[str, tuple[float, float]] = {
    "SFO": (37.62, -122.38),
    "JFK": (40.64, -73.78),
    "LAX": (33.94, -118.41),
    "ORD": (41.97, -87.91),
    "DFW": (32.90, -97.04),
    "DEN": (39.86, -104.67),
    "SEA": (47.45, -122.31),
    "ATL": (33.64, -84.43),
    "MIA": (25.80, -80.29),
    "BOS": (42.37, -71.01),
    "PHX": (33.43, -112.01),
    "IAH": (29.98, -95.34),
    "LAS": (36.08, -115.15),
    "MCO": (28.43, -81.31),
    "EWR": (40.69, -74.17),
    "CLT": (35.21, -80.94),
    "MSP": (44.88, -93.22),
    "DTW": (42.21, -83.35),
    "PHL": (39.87, -75.24),
    "LGA": (40.78, -73.87),
}
"""Approximate airport positions (degrees), used only to make flight durations plausible."""

FIRST_NAMES = (
    "Aarav", "Amelia", "Anya", "Chen", "Daiki", "Emma", "Ethan", "Fatima", "Harper", "Isabella", "Ivan",
    "James", "Juan", "Lei", "Liam", "Lucas", "Mei", "Mia", "Mohamed", "Noah", "Olivia", "Omar", "Raj",
    "Sofia", "Sophia", "Yara", "Yusuf", "Zoe", "Ava", "Evelyn",
)  # fmt: skip
LAST_NAMES = (
    "Ahmed", "Brown", "Davis", "Garcia", "Gonzalez", "Hernandez", "Ito", "Jackson", "Johnson", "Kim", "Khan",
    "Lee", "Li", "Lopez", "Martin", "Moore", "Muller", "Nguyen", "Patel", "Rossi", "Santos", "Silva", "Smith",
    "Sanchez", "Taylor", "Thomas", "Wang", "Wilson", "Kovacs", "Anderson",
)  # fmt: skip
STREETS = (
    "Maple Avenue", "Oak Street", "Cedar Street", "Pine Lane", "Elm Street", "Sunset Drive", "Hillcrest Drive",
    "Lakeview Drive", "Main Street", "River Road", "Willow Lane", "Park Avenue", "Broadway", "Spruce Street",
)  # fmt: skip
CITIES = (
    ("Austin", "TX", "787"), ("Charlotte", "NC", "282"), ("Chicago", "IL", "606"), ("Columbus", "OH", "432"),
    ("Dallas", "TX", "752"), ("Denver", "CO", "802"), ("Houston", "TX", "770"), ("Indianapolis", "IN", "462"),
    ("Jacksonville", "FL", "322"), ("Los Angeles", "CA", "900"), ("New York", "NY", "100"),
    ("Philadelphia", "PA", "191"), ("Phoenix", "AZ", "850"), ("San Antonio", "TX", "782"),
    ("San Diego", "CA", "921"), ("San Francisco", "CA", "941"), ("Seattle", "WA", "981"), ("Washington", "DC", "200"),
)  # fmt: skip
CABIN_PRICE_RANGES: dict[str, tuple[int, int]] = {
    "basic_economy": (50, 100),
    "economy": (100, 200),
    "business": (200, 500),
}
CERTIFICATE_VALUES = (100.0, 150.0, 250.0, 500.0)
RESERVED_IDS = frozenset(NEW_RESERVATION_IDS) | frozenset(NEW_CERTIFICATE_IDS)
"""Ids the tools hand out for new records: never generated, so bookings and certificates keep working."""


class AirlineGenConfig(BaseModel):
    """Size and calendar knobs of :func:`generate_airline_db` (defaults: a small, fast database)."""

    model_config = ConfigDict(extra="forbid")

    num_flights: int = Field(default=60, ge=1, le=9999, description="Scheduled flights (routes × departure time).")
    num_users: int = Field(default=40, ge=1, description="Customer profiles.")
    num_reservations: int = Field(default=80, ge=0, description="Reservations spread over the users.")
    start_date: date = Field(default=date(2024, 5, 1), description="First date every flight operates.")
    num_days: int = Field(default=30, ge=1, le=366, description="Consecutive operating dates per flight.")
    now: datetime = Field(
        default=datetime(2024, 5, 15, 15, 0, 0),
        description="The current time: earlier dates are flown, later ones bookable (tau2's is 2024-05-15 15:00).",
    )
    cancel_rate: float = Field(default=0.09, ge=0.0, le=1.0, description="Share of past flight dates cancelled.")
    delay_rate: float = Field(
        default=0.4, ge=0.0, le=1.0, description="Share of today's not-yet-departed flights delayed."
    )

    @classmethod
    def benchmark_sized(cls) -> AirlineGenConfig:
        """The size of tau2's airline db.json (300 flights × 30 dates, 500 users, 2,000 reservations).

        A database generated with it stands in for db.json where the file is not available (its ids
        differ, so it cannot replay the benchmark's tasks).
        """
        return cls(num_flights=300, num_users=500, num_reservations=2000)


def generate_airline_db(
    rng: random.Random,
    config: AirlineGenConfig | None = None,
    **knobs: Any,
) -> FlightDB:
    """A validated :class:`FlightDB` drawn from ``rng``; knobs as :class:`AirlineGenConfig` fields or kwargs."""
    cfg = AirlineGenConfig(**{**(config.model_dump() if config is not None else {}), **knobs})
    builder = _Builder(rng, cfg)
    return FlightDB.model_validate(builder.build())


class _Builder:
    """Builds the database as db.json-layout dicts, then validates it once."""

    def __init__(self, rng: random.Random, cfg: AirlineGenConfig):
        self.rng = rng
        self.cfg = cfg
        self.dates = [cfg.start_date + timedelta(days=i) for i in range(cfg.num_days)]
        self.used_ids: set[str] = set(RESERVED_IDS)
        self.flights: dict[str, dict[str, Any]] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.reservations: dict[str, dict[str, Any]] = {}

    def build(self) -> dict[str, Any]:
        self._make_flights()
        self._make_users()
        self._make_reservations()
        return {"flights": self.flights, "users": self.users, "reservations": self.reservations}

    # ----- ids ------------------------------------------------------------------------------------------
    def _unique(self, make: Any) -> str:
        while True:
            value: str = make()
            if value not in self.used_ids:
                self.used_ids.add(value)
                return value

    def _method_id(self, prefix: str) -> str:
        return self._unique(lambda: f"{prefix}_{self.rng.randint(1_000_000, 9_999_999)}")

    # ----- flights ----------------------------------------------------------------------------------------
    def _routes(self) -> list[tuple[str, str]]:
        """Routes for ``num_flights`` flights; most routes get a return route so round trips exist."""
        codes = [code for code, _ in AIRPORTS]
        routes: list[tuple[str, str]] = []
        while len(routes) < self.cfg.num_flights:
            origin, destination = self.rng.sample(codes, 2)
            routes.append((origin, destination))
            if len(routes) < self.cfg.num_flights and self.rng.random() < 0.8:
                routes.append((destination, origin))
        return routes

    def _duration_minutes(self, origin: str, destination: str) -> int:
        (lat1, lon1), (lat2, lon2) = AIRPORT_COORDINATES[origin], AIRPORT_COORDINATES[destination]
        p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
        central = math.acos(min(1.0, math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl)))
        km = 6371.0 * central
        minutes = 30 + km / 800.0 * 60.0  # taxi and climb, then cruise at ~800 km/h
        return max(60, round(minutes / 30.0) * 30)

    def _make_flights(self) -> None:
        width = max(3, len(str(self.cfg.num_flights)))
        for index, (origin, destination) in enumerate(self._routes(), start=1):
            number = f"HAT{index:0{width}d}"
            departure_hour = self.rng.randrange(24)
            duration = self._duration_minutes(origin, destination)
            arrival_total = departure_hour * 60 + duration
            arrival = f"{(arrival_total // 60) % 24:02d}:{arrival_total % 60:02d}:00"
            if arrival_total >= 24 * 60:
                arrival += "+1"
            self.flights[number] = {
                "flight_number": number,
                "origin": origin,
                "destination": destination,
                "scheduled_departure_time_est": f"{departure_hour:02d}:00:00",
                "scheduled_arrival_time_est": arrival,
                "dates": {day.isoformat(): self._date_status(day, departure_hour, duration) for day in self.dates},
            }

    def _date_status(self, day: date, departure_hour: int, duration: int) -> dict[str, Any]:
        rng, now = self.rng, self.cfg.now
        scheduled = datetime(day.year, day.month, day.day, departure_hour)
        if day > now.date():
            return {
                "status": "available",
                "available_seats": {cabin: rng.randint(0, 20) for cabin in CABIN_CLASSES},
                "prices": {cabin: rng.randint(*CABIN_PRICE_RANGES[cabin]) for cabin in CABIN_CLASSES},
            }
        if day < now.date() and rng.random() < self.cfg.cancel_rate:
            return {"status": "cancelled"}
        departed = scheduled + timedelta(minutes=rng.randint(-30, 30))
        arrived = departed + timedelta(minutes=duration + rng.randint(-25, 25))
        if day < now.date() or arrived <= now:
            return {
                "status": "landed",
                "actual_departure_time_est": _stamp(departed),
                "actual_arrival_time_est": _stamp(arrived),
            }
        if departed <= now:
            return {
                "status": "flying",
                "actual_departure_time_est": _stamp(departed),
                "estimated_arrival_time_est": _stamp(arrived),
            }
        if rng.random() < self.cfg.delay_rate:
            delay = timedelta(minutes=rng.randint(45, 240))
            return {
                "status": "delayed",
                "estimated_departure_time_est": _stamp(scheduled + delay),
                "estimated_arrival_time_est": _stamp(scheduled + delay + timedelta(minutes=duration)),
            }
        return {
            "status": "on time",
            "estimated_departure_time_est": _stamp(departed),
            "estimated_arrival_time_est": _stamp(arrived),
        }

    # ----- users --------------------------------------------------------------------------------------------
    def _person(self) -> dict[str, str]:
        dob = date(1945, 1, 1) + timedelta(days=self.rng.randrange(365 * 60))
        return {
            "first_name": self.rng.choice(FIRST_NAMES),
            "last_name": self.rng.choice(LAST_NAMES),
            "dob": dob.isoformat(),
        }

    def _payment_methods(self) -> dict[str, dict[str, Any]]:
        rng = self.rng
        methods: dict[str, dict[str, Any]] = {}
        for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 5))):
            kind = rng.choice(("credit_card", "gift_card", "certificate"))
            method_id = self._method_id(kind)
            if kind == "credit_card":
                methods[method_id] = {
                    "source": kind,
                    "id": method_id,
                    "brand": rng.choice(("visa", "mastercard")),
                    "last_four": f"{rng.randrange(10_000):04d}",
                }
            elif kind == "gift_card":
                methods[method_id] = {"source": kind, "id": method_id, "amount": float(rng.randint(0, 300))}
            else:
                methods[method_id] = {"source": kind, "id": method_id, "amount": rng.choice(CERTIFICATE_VALUES)}
        return methods

    def _make_users(self) -> None:
        rng = self.rng
        for _ in range(self.cfg.num_users):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            user_id = self._unique(
                lambda first=first, last=last: f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"
            )
            city, state, zip_prefix = rng.choice(CITIES)
            person = self._person()
            self.users[user_id] = {
                "user_id": user_id,
                "name": {"first_name": first, "last_name": last},
                "address": {
                    "address1": f"{rng.randint(100, 999)} {rng.choice(STREETS)}",
                    "address2": f"Suite {rng.randint(100, 999)}",
                    "city": city,
                    "country": "USA",
                    "state": state,
                    "zip": f"{zip_prefix}{rng.randint(0, 99):02d}",
                },
                "email": f"{first.lower()}.{last.lower()}{rng.randint(1000, 9999)}@example.com",
                "dob": person["dob"],
                "payment_methods": self._payment_methods(),
                "saved_passengers": [self._person() for _ in range(rng.choice((0, 1, 1, 2)))],
                "membership": rng.choice(("regular", "silver", "gold")),
                "reservations": [],
            }

    # ----- reservations ---------------------------------------------------------------------------------------
    def _connections(self) -> dict[str, list[str]]:
        by_origin: dict[str, list[str]] = {}
        for number, flight in self.flights.items():
            by_origin.setdefault(flight["origin"], []).append(number)
        return by_origin

    def _itinerary(self, start: str, day_index: int, by_origin: dict[str, list[str]]) -> list[tuple[str, int]]:
        """One direction: the flight ``start`` on ``day_index``, maybe followed by a same-day connection."""
        first = self.flights[start]
        legs = [(start, day_index)]
        if "+1" in first["scheduled_arrival_time_est"] or self.rng.random() < 0.5:
            return legs
        onward = [
            number
            for number in by_origin.get(first["destination"], [])
            if self.flights[number]["scheduled_departure_time_est"] >= first["scheduled_arrival_time_est"]
            and self.flights[number]["destination"] != first["origin"]
        ]
        if onward:
            legs.append((self.rng.choice(onward), day_index))
        return legs

    def _make_reservations(self) -> None:
        rng, cfg = self.rng, self.cfg
        by_origin = self._connections()
        numbers = list(self.flights)
        user_ids = list(self.users)
        attempts = 0
        while len(self.reservations) < cfg.num_reservations and attempts < 50 * cfg.num_reservations:
            attempts += 1
            user = self.users[rng.choice(user_ids)]
            outbound_day = rng.randrange(len(self.dates))
            outbound = self._itinerary(rng.choice(numbers), outbound_day, by_origin)
            origin = self.flights[outbound[0][0]]["origin"]
            destination = self.flights[outbound[-1][0]]["destination"]
            legs = list(outbound)
            flight_type = "one_way"
            returns = [n for n in by_origin.get(destination, []) if self.flights[n]["destination"] == origin]
            if returns and outbound_day + 1 < len(self.dates) and rng.random() < 0.5:
                return_day = rng.randrange(outbound_day + 1, min(len(self.dates), outbound_day + 8))
                legs.append((rng.choice(returns), return_day))
                flight_type = "round_trip"
            cabin = rng.choice(CABIN_CLASSES)
            passengers = self._passengers(user)
            segments = self._price_segments(legs, cabin, len(passengers))
            if segments is None:
                continue  # not enough seats left on a bookable date: draw again
            insurance = rng.choice(("yes", "no"))
            total = sum(segment["price"] for segment in segments) * len(passengers)
            total += 30 * len(passengers) if insurance == "yes" else 0
            reservation_id = self._unique(
                lambda: "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(6))
            )
            self.reservations[reservation_id] = {
                "reservation_id": reservation_id,
                "user_id": user["user_id"],
                "origin": origin,
                "destination": destination,
                "flight_type": flight_type,
                "cabin": cabin,
                "flights": segments,
                "passengers": passengers,
                "payment_history": [{"payment_id": self._payer(user), "amount": total}],
                "created_at": self._created_at(self.dates[outbound_day]),
                "total_baggages": rng.choice((0, 0, 0, 1, 1, 2, 3)) * len(passengers),
                "nonfree_baggages": 0,
                "insurance": insurance,
            }
            for number, day_index in legs:
                on_date = self.flights[number]["dates"][self.dates[day_index].isoformat()]
                if on_date["status"] == "available":
                    on_date["available_seats"][cabin] -= len(passengers)
            user["reservations"].append(reservation_id)

    def _passengers(self, user: dict[str, Any]) -> list[dict[str, str]]:
        count = self.rng.choice((1, 1, 1, 2, 2, 3, 4))
        lead = {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}
        others = [dict(p) for p in user["saved_passengers"]]
        people = [lead, *others]
        while len(people) < count:
            people.append(self._person())
        return people[:count]

    def _price_segments(self, legs: list[tuple[str, int]], cabin: str, passengers: int) -> list[dict[str, Any]] | None:
        segments = []
        for number, day_index in legs:
            flight = self.flights[number]
            day = self.dates[day_index].isoformat()
            on_date = flight["dates"][day]
            if on_date["status"] == "available":
                if on_date["available_seats"][cabin] < passengers:
                    return None
                price = on_date["prices"][cabin]
            else:
                price = self.rng.randint(*CABIN_PRICE_RANGES[cabin])
            segments.append(
                {
                    "flight_number": number,
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "date": day,
                    "price": price,
                }
            )
        return segments

    def _payer(self, user: dict[str, Any]) -> str:
        """A saved method to pay with: a card or gift card when there is one, else a certificate."""
        methods = list(user["payment_methods"].values())
        preferred = [m["id"] for m in methods if m["source"] != "certificate"]
        chosen: str = self.rng.choice(preferred or [m["id"] for m in methods])
        return chosen

    def _created_at(self, first_flight_day: date) -> str:
        """A booking time before both "now" and the first flight (up to two weeks earlier)."""
        latest = min(self.cfg.now, datetime(first_flight_day.year, first_flight_day.month, first_flight_day.day))
        return _stamp(latest - timedelta(seconds=self.rng.randint(60, 14 * 24 * 3600)))


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")
