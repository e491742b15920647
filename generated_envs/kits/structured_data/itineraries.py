"""Flights for a "cheapest itinerary that fits" request: the target and near-miss traps (the structured-data env).

A :class:`Trip` is the request (route, date, cabin, party, earliest departure). :func:`itinerary_options`
builds the target itinerary and traps that each break one constraint (an earlier departure, sold-out
seats, a dearer fare, or a cheaper fare only in the neighbouring cabin's price column), placed so that
every trap is strict; :func:`noise_flights` adds unrelated flights. Every random choice comes from the
``rng`` passed in, in a fixed order (the env's golden fingerprints depend on it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from trace_envs.domains.airline.records import CABIN_PRICE_RANGES, CABINS, airline_flight, available_on
from trace_envs.domains.tau2_records import Record

MISREAD_CABIN = {"basic_economy": "economy", "economy": "basic_economy", "business": "economy"}
"""The neighbouring price column a careless reader takes for the requested cabin."""
TRAVEL_DATES = tuple(f"2024-05-{day}" for day in range(16, 31))
"""Bookable dates (after the domain's "now", 2024-05-15)."""
TRAP_KINDS = ("early", "misread", "sold_out", "pricier")
"""What a trap gets wrong: leaves too early, is cheaper only in the misread column, has too few seats in the
cabin, or is dearer."""


@dataclass(frozen=True)
class Option:
    """One candidate itinerary: its kind (``target`` or a trap kind), legs and per-passenger price by cabin."""

    kind: str
    flights: list[Record]
    totals: dict[str, int]

    @property
    def numbers(self) -> list[str]:
        """Its flight numbers, in leg order."""
        return [f["flight_number"] for f in self.flights]


@dataclass(frozen=True)
class Trip:
    """The request: route, date, cabin, whether it connects, whether it is only a report, party size, and the
    earliest departure hour."""

    origin: str
    destination: str
    day: str
    cabin: str
    onestop: bool
    report: bool
    passengers: int
    earliest: int

    @property
    def misread(self) -> str:
        """The cabin whose price column a careless reader takes for this one."""
        return MISREAD_CABIN[self.cabin]


def itinerary_options(
    rng: random.Random, distractors: int, trip: Trip, numbers: list[str], hubs: list[str]
) -> tuple[list[Option], dict[str, Record]]:
    """The target itinerary and ``distractors`` traps (shuffled), and their flights by number in creation order;
    flight numbers are popped from ``numbers``, one-stop traps connect through ``hubs[i]``."""
    kinds: list[Any] = ["target", "misread"]
    kinds += [rng.choice(TRAP_KINDS) for _ in range(distractors - 1)]
    rng.shuffle(kinds)
    target_prices = [
        {c: rng.randint(CABIN_PRICE_RANGES[c][0] + 10, CABIN_PRICE_RANGES[c][1] - 15) for c in CABINS}
        for _ in range(2 if trip.onestop else 1)
    ]
    earliest = trip.earliest
    late_hours = rng.sample(range(earliest, earliest + 10), len(kinds)) if not trip.onestop else None
    early_hours = rng.sample(range(5, earliest), min(len(kinds), earliest - 5))
    options: list[Option] = []
    flights: dict[str, Record] = {}
    for index, kind in enumerate(kinds):
        if kind == "early":
            hour = early_hours[index % len(early_hours)]
        elif late_hours is not None:
            hour = late_hours[index]
        else:
            hour = rng.randint(earliest, earliest + 3)
        legs = (
            [(trip.origin, hubs[index]), (hubs[index], trip.destination)]
            if trip.onestop
            else [(trip.origin, trip.destination)]
        )
        options.append(_itinerary(rng, trip, kind, legs, hour * 60, numbers, target_prices))
        flights.update((f["flight_number"], f) for f in options[-1].flights)
    return options, flights


def _itinerary(
    rng: random.Random,
    trip: Trip,
    kind: str,
    legs: list[tuple[str, str]],
    start: int,
    numbers: list[str],
    target_prices: list[dict[str, int]],
) -> Option:
    """One candidate itinerary of ``kind``, its legs chained from ``start`` (minutes after midnight)."""
    option_flights = []
    totals = dict.fromkeys(CABINS, 0)
    for leg, (leg_from, leg_to) in enumerate(legs):
        prices = _leg_prices(rng, kind, trip.cabin, trip.misread, target_prices[leg])
        seats = {c: rng.randint(trip.passengers, 20) for c in CABINS}
        if kind == "sold_out" and leg == len(legs) - 1:
            seats[trip.cabin] = rng.randint(0, trip.passengers - 1)
        flight = airline_flight(numbers.pop(), leg_from, leg_to, start, {trip.day: available_on(seats, prices)})
        option_flights.append(flight)
        for c in CABINS:
            totals[c] += prices[c]
        start = min(int(flight["scheduled_arrival_time_est"][:2]) + rng.randint(1, 2), 23) * 60
    return Option(kind=kind, flights=option_flights, totals=totals)


def _leg_prices(rng: random.Random, kind: str, cabin: str, misread: str, target: dict[str, int]) -> dict[str, int]:
    """One leg's price per cabin, placed relative to the target leg's so every trap is strict."""
    prices = {c: rng.randint(*CABIN_PRICE_RANGES[c]) for c in CABINS}
    low, high = CABIN_PRICE_RANGES[cabin]
    if kind == "target":
        return dict(target)
    if kind in ("early", "sold_out"):  # cheaper in the requested cabin, but not allowed
        prices[cabin] = rng.randint(low, target[cabin] - 1)
    else:  # eligible, but dearer in the requested cabin
        prices[cabin] = rng.randint(target[cabin] + 1, high)
    if kind == "misread":  # ... and cheaper in the column next to it
        prices[misread] = rng.randint(CABIN_PRICE_RANGES[misread][0], target[misread] - 1)
    return prices


def noise_flights(
    rng: random.Random, flights: dict[str, Record], count: int, codes: list[str], day: str, numbers: list[str]
) -> None:
    """Add ``count`` unrelated flights on ``day`` between airports of ``codes`` to ``flights`` (numbers popped
    from ``numbers``)."""
    for _ in range(count):
        noise_from, noise_to = rng.sample(codes, 2)
        seats = {c: rng.randint(0, 20) for c in CABINS}
        prices = {c: rng.randint(*CABIN_PRICE_RANGES[c]) for c in CABINS}
        number = numbers.pop()
        flights[number] = airline_flight(
            number, noise_from, noise_to, rng.randint(5, 20) * 60, {day: available_on(seats, prices)}
        )


def found_itinerary(results: list[Any], numbers: list[str]) -> list[Any]:
    """The legs (``DirectFlight`` results) of the itinerary with these flight numbers in a search's output: a
    direct search lists flights, a one-stop search lists legs pairs."""
    for result in results:
        legs = result if isinstance(result, list) else [result]
        if [leg.flight_number for leg in legs] == numbers:
            return legs
    raise LookupError(f"the search did not return the itinerary {' + '.join(numbers)}")


def travellers(user: Any) -> list[Record]:
    """Everyone on a booking for the customer and their saved passengers, from a ``get_user_details`` result."""
    me = {"first_name": user.name.first_name, "last_name": user.name.last_name, "dob": user.dob}
    return [me, *(p.model_dump() for p in user.saved_passengers)]


def booking_arguments(trip: Trip, numbers: list[str], customer: Any, card_id: str, total: int) -> dict[str, Any]:
    """``book_reservation``'s arguments for flights ``numbers`` in the trip's cabin, for the customer and their
    saved passengers (as ``get_user_details`` returned them), ``total`` on one card, no bags or insurance."""
    return {
        "user_id": customer.user_id,
        "origin": trip.origin,
        "destination": trip.destination,
        "flight_type": "one_way",
        "cabin": trip.cabin,
        "flights": [{"flight_number": number, "date": trip.day} for number in numbers],
        "passengers": travellers(customer),
        "payment_methods": [{"payment_id": card_id, "amount": total}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
