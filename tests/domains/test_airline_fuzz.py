"""Any airline tool call, however malformed, is a tool message (never an exception), and restore undoes it."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trace_envs.core import ToolCall
from trace_envs.domains.airline import AIRLINE, FlightDB, generate_airline_db

DB: FlightDB = generate_airline_db(random.Random(11), num_flights=16, num_users=6, num_reservations=12)
INITIAL = AIRLINE.state_hash(DB)

USER_IDS = list(DB.users)
RESERVATION_IDS = list(DB.reservations)
FLIGHT_NUMBERS = list(DB.flights)
DATES = sorted({day for flight in DB.flights.values() for day in flight.dates})
METHOD_IDS = [method_id for user in DB.users.values() for method_id in user.payment_methods]

json_leaf = (
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(-1e4, 1e4, allow_nan=False) | st.text(max_size=8)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def plausible(name: str) -> st.SearchStrategy[Any]:
    """Arguments that often name real records, so write tools get past their lookups."""
    flight = st.fixed_dictionaries({"flight_number": st.sampled_from(FLIGHT_NUMBERS), "date": st.sampled_from(DATES)})
    person = st.fixed_dictionaries(
        {"first_name": st.text(max_size=5), "last_name": st.text(max_size=5), "dob": st.just("1990-01-01")}
    )
    payment = st.fixed_dictionaries({"payment_id": st.sampled_from(METHOD_IDS), "amount": st.integers(0, 2000)})
    by_name: dict[str, st.SearchStrategy[Any]] = {
        "user_id": st.sampled_from(USER_IDS),
        "reservation_id": st.sampled_from(RESERVATION_IDS),
        "flight_number": st.sampled_from(FLIGHT_NUMBERS),
        "date": st.sampled_from(DATES),
        "origin": st.sampled_from(["SFO", "JFK", "LAX", "ORD", "DFW", "SEA"]),
        "destination": st.sampled_from(["SFO", "JFK", "LAX", "ORD", "DFW", "SEA"]),
        "flight_type": st.sampled_from(["one_way", "round_trip", "multi"]),
        "cabin": st.sampled_from(["basic_economy", "economy", "business", "first"]),
        "insurance": st.sampled_from(["yes", "no"]),
        "flights": st.lists(flight, max_size=3),
        "passengers": st.lists(person, min_size=1, max_size=3),
        "payment_methods": st.lists(payment, max_size=3),
        "payment_id": st.sampled_from(METHOD_IDS),
        "total_baggages": st.integers(0, 5),
        "nonfree_baggages": st.integers(0, 5),
        "amount": st.integers(0, 500),
        "expression": st.text(alphabet="0123456789+-*/(). ", max_size=12),
        "summary": st.text(max_size=10),
    }
    return by_name.get(name, json_value)


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    name = draw(st.sampled_from([*AIRLINE.toolset, "no_such_tool"]))
    params = list(AIRLINE.toolset[name].parameters.model_fields) if name in AIRLINE.toolset else []
    arguments: dict[str, Any] = {}
    for param in params:
        choice = draw(st.integers(0, 9))
        if choice == 0:
            continue  # missing argument
        arguments[param] = draw(json_value) if choice == 1 else draw(plausible(param))
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(st.text(min_size=1, max_size=6))] = draw(json_value)  # unexpected argument
    return ToolCall(name=name, arguments=arguments, id="fuzz")


@st.composite
def coherent_writes(draw: st.DrawFn) -> ToolCall:
    """Write calls built from one reservation or user, so that many of them succeed."""
    reservation = DB.reservations[draw(st.sampled_from(RESERVATION_IDS))]
    methods = list(DB.users[reservation.user_id].payment_methods)
    payment_id = draw(st.sampled_from(methods))
    kind = draw(st.sampled_from(["baggages", "flights", "book"]))
    if kind == "baggages":
        arguments: dict[str, Any] = {
            "reservation_id": reservation.reservation_id,
            "total_baggages": draw(st.integers(0, 6)),
            "nonfree_baggages": draw(st.integers(0, 3)),
            "payment_id": payment_id,
        }
        return ToolCall(name="update_reservation_baggages", arguments=arguments)
    if kind == "flights":
        segments = [{"flight_number": f.flight_number, "date": f.date} for f in reservation.flights]
        segments = draw(st.lists(st.sampled_from(segments), min_size=1, max_size=len(segments), unique_by=str))
        arguments = {
            "reservation_id": reservation.reservation_id,
            "cabin": draw(st.sampled_from(["basic_economy", "economy", "business"])),
            "flights": segments,
            "payment_id": payment_id,
        }
        return ToolCall(name="update_reservation_flights", arguments=arguments)
    bookable = [
        (number, day, status.prices)
        for number, flight in DB.flights.items()
        for day, status in flight.dates.items()
        if status.status == "available"
    ]
    number, day, prices = draw(st.sampled_from(bookable))
    cabin = draw(st.sampled_from(["basic_economy", "economy", "business"]))
    arguments = {
        "user_id": reservation.user_id,
        "origin": DB.flights[number].origin,
        "destination": DB.flights[number].destination,
        "flight_type": "one_way",
        "cabin": cabin,
        "flights": [{"flight_number": number, "date": day}],
        "passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}],
        "payment_methods": [{"payment_id": payment_id, "amount": prices[cabin]}],  # type: ignore[index]
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    return ToolCall(name="book_reservation", arguments=arguments)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(tool_calls() | coherent_writes(), min_size=1, max_size=8))
def test_any_call_sequence_yields_messages_and_restore_undoes_it(calls: list[ToolCall]) -> None:
    DB.restore()
    try:
        for call in calls:
            result = AIRLINE.toolset.invoke(DB, call)
            assert isinstance(result.content, str)
            assert result.content.startswith("Error: ") if result.error else result.content
    finally:
        DB.restore()
    assert AIRLINE.state_hash(DB) == INITIAL
