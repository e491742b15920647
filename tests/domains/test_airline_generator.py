"""The seeded airline generator: deterministic, valid, realistic, and every tool works on its output."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from trace_envs.core import ToolCall
from trace_envs.domains.airline import AIRLINE, AirlineGenConfig, FlightDB, generate_airline_db
from trace_envs.domains.airline.data_model import FlightDateStatusAvailable
from trace_envs.domains.airline.tools import AIRPORTS
from trace_envs.domains.tau2_common import file_db_dump

SMALL = {"num_flights": 24, "num_users": 12, "num_reservations": 30}


def invoke(db: FlightDB, name: str, **arguments: object) -> tuple[bool, str]:
    result = AIRLINE.toolset.invoke(db, ToolCall(name=name, arguments=arguments))
    return result.error, result.content


def test_same_seed_same_hash_different_seed_different_hash() -> None:
    first = AIRLINE.state_hash(generate_airline_db(random.Random(7), **SMALL))
    assert AIRLINE.state_hash(generate_airline_db(random.Random(7), **SMALL)) == first
    assert AIRLINE.state_hash(generate_airline_db(random.Random(8), **SMALL)) != first


def test_same_seed_same_hash_in_another_process() -> None:
    code = (
        "import random; from trace_envs.domains.airline import AIRLINE, generate_airline_db; "
        "print(AIRLINE.state_hash(generate_airline_db(random.Random(7), num_flights=24, num_users=12, num_reservations=30)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": "123"}
    )
    assert out.stdout.strip() == AIRLINE.state_hash(generate_airline_db(random.Random(7), **SMALL))


def test_sizes_follow_the_knobs() -> None:
    db = generate_airline_db(random.Random(1), num_flights=10, num_users=5, num_reservations=12, num_days=7)
    assert db.statistics() == {"num_flights": 10, "num_flight_dates": 70, "num_users": 5, "num_reservations": 12}
    config = AirlineGenConfig(num_flights=3, num_users=2, num_reservations=0)
    assert generate_airline_db(random.Random(1), config).statistics()["num_flights"] == 3
    assert generate_airline_db(random.Random(1), config, num_users=4).statistics()["num_users"] == 4


def test_benchmark_sized_config_matches_db_json_counts() -> None:
    db = generate_airline_db(random.Random(0), AirlineGenConfig.benchmark_sized())
    assert db.statistics() == {"num_flights": 300, "num_flight_dates": 9000, "num_users": 500, "num_reservations": 2000}
    sources = Counter(m.source for u in db.users.values() for m in u.payment_methods.values())
    assert set(sources) == {"credit_card", "gift_card", "certificate"}


def test_bad_knobs_name_the_field() -> None:
    with pytest.raises(ValidationError, match="num_flights"):
        generate_airline_db(random.Random(0), num_flights=0)
    with pytest.raises(ValidationError, match="num_planes"):
        generate_airline_db(random.Random(0), num_planes=3)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_generated_db_is_valid_and_consistent(seed: int) -> None:
    db = generate_airline_db(random.Random(seed), **SMALL)
    # Round trip through the db.json form and the canonical form.
    assert FlightDB.model_validate(json.loads(json.dumps(file_db_dump(db)))) == db
    assert AIRLINE.state_hash(FlightDB.model_validate(AIRLINE.dump_state(db))) == AIRLINE.state_hash(db)
    airports = {code for code, _ in AIRPORTS}
    now = "2024-05-15"
    for number, flight in db.flights.items():
        assert number == flight.flight_number
        assert {flight.origin, flight.destination} <= airports
        assert flight.origin != flight.destination
        for day, status in flight.dates.items():
            assert (status.status == "available") == (day > now)
            if isinstance(status, FlightDateStatusAvailable):
                assert all(seats >= 0 for seats in status.available_seats.values())
    for reservation_id, reservation in db.reservations.items():
        assert reservation_id == reservation.reservation_id
        assert reservation_id not in {"HATHAT", "HATHAU", "HATHAV"}
        user = db.users[reservation.user_id]
        assert reservation_id in user.reservations
        assert reservation.payment_history[0].payment_id in user.payment_methods
        assert reservation.created_at < "2024-05-15T15:00:00"
        assert reservation.created_at < reservation.flights[0].date + "T00:00:00"
        for segment in reservation.flights:
            flight = db.flights[segment.flight_number]
            assert (segment.origin, segment.destination) == (flight.origin, flight.destination)
            assert segment.date in flight.dates
        legs = reservation.flights
        assert all(
            a.destination == b.origin or reservation.flight_type == "round_trip" for a, b in itertools.pairwise(legs)
        )
        insurance = 30 * len(reservation.passengers) if reservation.insurance == "yes" else 0
        total = sum(f.price for f in legs) * len(reservation.passengers) + insurance
        assert sum(p.amount for p in reservation.payment_history) == total
    for user_id, user in db.users.items():
        assert user_id == user.user_id
        assert all(method_id == method.id for method_id, method in user.payment_methods.items())
        assert not {"certificate_3221322", "certificate_3221323", "certificate_3221324"} & set(user.payment_methods)


def test_status_mix_looks_like_the_benchmarks() -> None:
    db = generate_airline_db(random.Random(0), num_flights=120, num_users=20, num_reservations=20)
    statuses = Counter(s.status for f in db.flights.values() for s in f.dates.values())
    assert set(statuses) == {"available", "landed", "cancelled", "flying", "on time", "delayed"}
    assert statuses["available"] == 120 * 15
    trips = Counter(r.flight_type for r in db.reservations.values())
    assert set(trips) == {"one_way", "round_trip"}


def test_every_tool_works_on_a_generated_db() -> None:
    db = generate_airline_db(random.Random(3), **SMALL)
    reservation = next(r for r in db.reservations.values() if r.cabin != "basic_economy")
    user = db.users[reservation.user_id]
    card = next((m.id for m in user.payment_methods.values() if m.source == "credit_card"), None)
    flight = next(f for f in db.flights.values())
    day = next(
        d
        for d, s in flight.dates.items()
        if isinstance(s, FlightDateStatusAvailable) and s.available_seats["economy"] > 0
    )
    assert not invoke(db, "get_user_details", user_id=user.user_id)[0]
    assert not invoke(db, "get_reservation_details", reservation_id=reservation.reservation_id)[0]
    assert not invoke(db, "list_all_airports")[0]
    error, content = invoke(db, "search_direct_flight", origin=flight.origin, destination=flight.destination, date=day)
    assert not error
    assert flight.flight_number in [f["flight_number"] for f in json.loads(content)]
    assert not invoke(db, "search_onestop_flight", origin=flight.origin, destination="JFK", date=day)[0]
    assert invoke(db, "get_flight_status", flight_number=flight.flight_number, date=day) == (False, "available")
    assert not invoke(db, "calculate", expression="1 + 1")[0]
    assert not invoke(db, "transfer_to_human_agents", summary="x")[0]
    before = AIRLINE.state_hash(db)
    price = flight.dates[day].prices["economy"]  # type: ignore[union-attr]
    if card is not None:
        booking = {
            "user_id": user.user_id,
            "origin": flight.origin,
            "destination": flight.destination,
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [{"flight_number": flight.flight_number, "date": day}],
            "passengers": [{"first_name": "Ann", "last_name": "Lee", "dob": "1990-01-01"}],
            "payment_methods": [{"payment_id": card, "amount": price}],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        }
        error, content = invoke(db, "book_reservation", **booking)
        assert not error, content
        assert json.loads(content)["reservation_id"] == "HATHAT"
    assert not invoke(db, "send_certificate", user_id=user.user_id, amount=50)[0]
    assert not invoke(
        db,
        "update_reservation_passengers",
        reservation_id=reservation.reservation_id,
        passengers=[p.model_dump() for p in reservation.passengers],
    )[0]
    payer = reservation.payment_history[0].payment_id
    if db.users[reservation.user_id].payment_methods[payer].source != "certificate":
        error, content = invoke(
            db,
            "update_reservation_flights",
            reservation_id=reservation.reservation_id,
            cabin=reservation.cabin,
            flights=[{"flight_number": f.flight_number, "date": f.date} for f in reservation.flights],
            payment_id=payer,
        )
        assert not error, content
        error, content = invoke(
            db,
            "update_reservation_baggages",
            reservation_id=reservation.reservation_id,
            total_baggages=0,
            nonfree_baggages=0,
            payment_id=payer,
        )
        assert not error, content
    assert not invoke(db, "cancel_reservation", reservation_id=reservation.reservation_id)[0]
    assert AIRLINE.state_hash(db) != before
    db.restore()
    assert AIRLINE.state_hash(db) == AIRLINE.state_hash(generate_airline_db(random.Random(3), **SMALL))
