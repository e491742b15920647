"""Airline tools one by one: results, error messages and quirks as tau2-bench's reference records them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import ToolCall, ToolResult
from trace_envs.domains.airline import AIRLINE, FlightDB, load_db
from trace_envs.domains.airline.data_model import FlightDateStatusAvailable

# Task 8's booking: two economy seats on HAT271 (2024-05-26, 174 each), paid with a 500.0 certificate.
BOOKING: dict[str, Any] = {
    "user_id": "sophia_silva_7557",
    "origin": "ORD",
    "destination": "PHL",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT271", "date": "2024-05-26"}],
    "passengers": [
        {"first_name": "Sophia", "last_name": "Silva", "dob": "1957-10-05"},
        {"first_name": "Kevin", "last_name": "Smith", "dob": "2001-04-12"},
    ],
    "payment_methods": [{"payment_id": "certificate_8045380", "amount": 348}],
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}


@pytest.fixture(scope="module")
def base_db(shared_data: Path) -> FlightDB:
    return load_db(shared_data / "tau2" / "airline" / "db.json")


@pytest.fixture(scope="module")
def initial_hash(base_db: FlightDB) -> str:
    base_db.restore()
    return AIRLINE.state_hash(base_db)


@pytest.fixture
def db(base_db: FlightDB, initial_hash: str) -> Iterator[FlightDB]:
    """The shared database, restored (journal) before and after each test."""
    base_db.restore()
    yield base_db
    base_db.restore()


def call(db: FlightDB, name: str, **arguments: Any) -> ToolResult:
    return AIRLINE.toolset.invoke(db, ToolCall(name=name, arguments=arguments, id="c1"))


def ok(db: FlightDB, name: str, **arguments: Any) -> str:
    result = call(db, name, **arguments)
    assert not result.error, result.content
    return result.content


def err(db: FlightDB, name: str, **arguments: Any) -> str:
    result = call(db, name, **arguments)
    assert result.error, result.content
    return result.content


# ----- calling conventions ----------------------------------------------------------------------------------
def test_tool_order_and_kinds_are_upstreams() -> None:
    assert list(AIRLINE.toolset) == [
        "book_reservation",
        "calculate",
        "cancel_reservation",
        "get_reservation_details",
        "get_user_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
        "send_certificate",
        "transfer_to_human_agents",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "get_flight_status",
    ]
    kinds = {name: AIRLINE.toolset[name].kind for name in AIRLINE.toolset}
    assert [n for n, k in kinds.items() if k == "write"] == [
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    ]
    assert [n for n, k in kinds.items() if k == "generic"] == ["calculate", "transfer_to_human_agents"]
    assert sum(k == "read" for k in kinds.values()) == 6


def test_argument_errors_use_cpythons_wording_with_the_upstream_class(db: FlightDB) -> None:
    assert err(db, "get_user_details") == (
        "Error: AirlineTools.get_user_details() missing 1 required positional argument: 'user_id'"
    )
    assert err(db, "get_user_details", user_id="mia_li_3668", foo=1) == (
        "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'foo'"
    )
    assert err(db, "nonexistent_tool") == "Error: Tool 'nonexistent_tool' not found."


def test_lookup_errors_name_the_id(db: FlightDB) -> None:
    assert err(db, "get_user_details", user_id="nobody") == "Error: User nobody not found"
    assert err(db, "get_reservation_details", reservation_id="ZZZZZZ") == "Error: Reservation ZZZZZZ not found"
    assert err(db, "get_flight_status", flight_number="HAT999", date="2024-05-20") == "Error: Flight HAT999 not found"
    assert err(db, "get_flight_status", flight_number="HAT001", date="2024-06-01") == (
        "Error: Flight HAT001 not found on date 2024-06-01"
    )


# ----- reads -----------------------------------------------------------------------------------------------
def test_get_reservation_details_dumps_fields_in_declaration_order_with_null_status(db: FlightDB) -> None:
    content = ok(db, "get_reservation_details", reservation_id="EHGLP3")
    assert content.startswith('{"reservation_id": "EHGLP3", "user_id": "emma_kim_9957", "origin": "PHX", ')
    assert (
        '"flights": [{"flight_number": "HAT156", "origin": "PHX", "destination": "SEA", "date": "2024-05-17", "price": 50}'
        in content
    )
    assert content.endswith('"total_baggages": 0, "nonfree_baggages": 0, "insurance": "no", "status": null}')
    assert json.loads(content) == db.reservations["EHGLP3"].model_dump()


def test_get_user_details_dumps_payment_methods_per_class(db: FlightDB) -> None:
    content = ok(db, "get_user_details", user_id="mia_li_3668")
    data = json.loads(content)
    assert list(data) == [
        "user_id",
        "name",
        "address",
        "email",
        "dob",
        "payment_methods",
        "saved_passengers",
        "membership",
        "reservations",
    ]
    assert '"certificate_4856383": {"source": "certificate", "id": "certificate_4856383", "amount": 100.0}' in content
    assert (
        '"credit_card_4421486": {"source": "credit_card", "id": "credit_card_4421486", "brand": "visa", "last_four": "7447"}'
        in content
    )
    assert data["reservations"] == ["NO6JO3", "AIXC49", "HKEG34"]


def test_list_all_airports_is_the_fixed_list_of_20(db: FlightDB) -> None:
    data = json.loads(ok(db, "list_all_airports"))
    assert len(data) == 20
    assert data[0] == {"iata": "SFO", "city": "San Francisco"}
    assert data[-1] == {"iata": "LGA", "city": "LaGuardia"}
    assert [a["iata"] for a in data][:5] == ["SFO", "JFK", "LAX", "ORD", "DFW"]


def test_search_direct_flight_lists_available_flights_with_null_date(db: FlightDB) -> None:
    data = json.loads(ok(db, "search_direct_flight", origin="ORD", destination="PHL", date="2024-05-26"))
    assert data, "task 8 books HAT271 ORD->PHL on 2024-05-26"
    assert "HAT271" in [f["flight_number"] for f in data]
    numbers = [f["flight_number"] for f in data]
    assert numbers == sorted(numbers, key=list(db.flights).index)  # DB order
    for flight in data:
        assert list(flight) == [
            "flight_number",
            "origin",
            "destination",
            "status",
            "scheduled_departure_time_est",
            "scheduled_arrival_time_est",
            "date",
            "available_seats",
            "prices",
        ]
        assert flight["status"] == "available"
        assert flight["date"] is None
        stored = db.flights[flight["flight_number"]].dates["2024-05-26"]
        assert isinstance(stored, FlightDateStatusAvailable)
        assert flight["prices"] == stored.prices
    # Past dates are not available; no match is an empty list, never an error.
    assert ok(db, "search_direct_flight", origin="ORD", destination="PHL", date="2024-05-10") == "[]"
    assert ok(db, "search_direct_flight", origin="XXX", destination="PHL", date="2024-05-26") == "[]"


def test_search_onestop_flight_pairs_legs_and_connects_by_string_time(db: FlightDB) -> None:
    data = json.loads(ok(db, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-20"))
    assert data
    for first, second in data:
        assert first["origin"] == "JFK"
        assert second["destination"] == "SEA"
        assert first["destination"] == second["origin"]
        assert first["date"] == "2024-05-20"
        assert second["scheduled_departure_time_est"] >= first["scheduled_arrival_time_est"]
        expected_second = "2024-05-21" if "+1" in first["scheduled_arrival_time_est"] else "2024-05-20"
        assert second["date"] == expected_second


def test_search_onestop_next_day_is_unpadded_and_finds_nothing_early_in_the_month(db: FlightDB) -> None:
    # Upstream quirk: the day after 2024-05-05 is "2024-05-6", a date no flight has, so overnight
    # first legs never connect before the 10th. Compare with the same search on a two-digit day.
    overnight = [n for n, f in db.flights.items() if "+1" in f.scheduled_arrival_time_est]
    origins = sorted({db.flights[n].origin for n in overnight})
    for origin in origins:
        for first, _ in json.loads(
            ok(db, "search_onestop_flight", origin=origin, destination="JFK", date="2024-05-05")
        ):
            assert "+1" not in first["scheduled_arrival_time_est"]
    found_overnight = False
    for origin in origins:
        for first, second in json.loads(
            ok(db, "search_onestop_flight", origin=origin, destination="JFK", date="2024-05-20")
        ):
            if "+1" in first["scheduled_arrival_time_est"]:
                found_overnight = True
                assert second["date"] == "2024-05-21"
    assert found_overnight


def test_get_flight_status_is_plain_text(db: FlightDB) -> None:
    assert ok(db, "get_flight_status", flight_number="HAT001", date="2024-05-01") == "landed"
    assert ok(db, "get_flight_status", flight_number="HAT001", date="2024-05-03") == "cancelled"
    assert ok(db, "get_flight_status", flight_number="HAT005", date="2024-05-15") == "flying"
    assert ok(db, "get_flight_status", flight_number="HAT005", date="2024-05-16") == "available"
    statuses = {ok(db, "get_flight_status", flight_number=n, date="2024-05-15") for n in db.flights}
    assert statuses == {"landed", "delayed", "flying", "on time"}


# ----- generic -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "expected"),
    [("2+2", "4.0"), ("10/3", "3.33"), ("2**3", "8.0"), ("(100 - 25) * 2", "150.0"), ("481.5 + 0.004", "481.5")],
)
def test_calculate_rounds_to_two_places(db: FlightDB, expression: str, expected: str) -> None:
    assert ok(db, "calculate", expression=expression) == expected


def test_calculate_errors(db: FlightDB) -> None:
    assert err(db, "calculate", expression="1/0") == "Error: division by zero"
    assert err(db, "calculate", expression="(2") == "Error: '(' was never closed (<string>, line 1)"
    assert err(db, "calculate", expression="2 + x") == "Error: Invalid characters in expression"


@pytest.mark.parametrize("expression", ["9**9**9**9", "9**9**9", "2.0**9**9**9", "(1)(9**9**9)", "(9**9)**(9**9)"])
def test_calculate_refuses_results_too_large_to_compute(db: FlightDB, expression: str) -> None:
    # Upstream would hang or run out of memory here; we answer at once (the only deviation of calculate).
    assert err(db, "calculate", expression=expression) == "Error: Expression too large to calculate"


def test_calculate_keeps_pythons_semantics_below_the_limit(db: FlightDB) -> None:
    assert ok(db, "calculate", expression="10**400/10**399") == "10.0"
    assert ok(db, "calculate", expression="1**(10**100)") == "1.0"
    assert ok(db, "calculate", expression="2**-99999") == "0.0"
    assert err(db, "calculate", expression="2**1024") == "Error: int too large to convert to float"
    assert err(db, "calculate", expression="()") == (
        "Error: float() argument must be a string or a real number, not 'tuple'"
    )


def test_transfer_to_human_agents_only_answers(db: FlightDB, initial_hash: str) -> None:
    assert ok(db, "transfer_to_human_agents", summary="wants a human") == "Transfer successful"
    assert AIRLINE.state_hash(db) == initial_hash


# ----- book_reservation --------------------------------------------------------------------------------------
def test_book_reservation_happy_path(db: FlightDB) -> None:
    db.touch(db.flights, "HAT271")  # journal the test's own edit: enough seats for four bookings
    db.flights["HAT271"].dates["2024-05-26"].available_seats["economy"] = 9  # type: ignore[union-attr]
    data = json.loads(ok(db, "book_reservation", **BOOKING))
    assert data["reservation_id"] == "HATHAT"
    assert data["created_at"] == "2024-05-15T15:00:00"
    assert data["status"] is None
    assert data["flights"] == [
        {"flight_number": "HAT271", "origin": "ORD", "destination": "PHL", "date": "2024-05-26", "price": 174}
    ]
    assert data["payment_history"] == [{"payment_id": "certificate_8045380", "amount": 348}]
    user = db.users["sophia_silva_7557"]
    assert "certificate_8045380" not in user.payment_methods  # used certificate removed, remainder lost
    assert user.reservations[-1] == "HATHAT"
    assert db.flights["HAT271"].dates["2024-05-26"].available_seats["economy"] == 7  # type: ignore[union-attr]
    # The next bookings get the next fixed ids, then none is left.
    booking = {
        **BOOKING,
        "passengers": BOOKING["passengers"][:1],
        "payment_methods": [{"payment_id": "credit_card_4196779", "amount": 174}],
    }
    assert json.loads(ok(db, "book_reservation", **booking))["reservation_id"] == "HATHAU"
    assert json.loads(ok(db, "book_reservation", **booking))["reservation_id"] == "HATHAV"
    assert err(db, "book_reservation", **booking) == "Error: Too many reservations"


def test_book_reservation_gift_cards_are_debited_as_floats(db: FlightDB) -> None:
    # Task 25: a 128 gift-card part and a 247 credit-card part.
    before = db.users["ivan_muller_7015"].payment_methods["gift_card_8516878"].amount  # type: ignore[union-attr]
    ok(
        db,
        "book_reservation",
        user_id="ivan_muller_7015",
        origin="DTW",
        destination="SEA",
        flight_type="one_way",
        cabin="economy",
        flights=[{"flight_number": "HAT097", "date": "2024-05-17"}, {"flight_number": "HAT251", "date": "2024-05-17"}],
        passengers=[{"first_name": "Ivan", "last_name": "Smith", "dob": "1986-03-14"}],
        payment_methods=[
            {"payment_id": "gift_card_8516878", "amount": 128},
            {"payment_id": "credit_card_3563913", "amount": 247},
        ],
        total_baggages=0,
        nonfree_baggages=0,
        insurance="no",
    )
    after = db.users["ivan_muller_7015"].payment_methods["gift_card_8516878"].amount  # type: ignore[union-attr]
    assert isinstance(after, float)
    assert after == before - 128


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"user_id": "nobody"}, "Error: User nobody not found"),
        ({"flights": [{"flight_number": "HAT999", "date": "2024-05-26"}]}, "Error: Flight HAT999 not found"),
        (
            {"flights": [{"flight_number": "HAT271", "date": "2024-06-26"}]},
            "Error: Flight HAT271 not found on date 2024-06-26",
        ),
        (
            {"flights": [{"flight_number": "HAT271", "date": "2024-05-02"}]},
            "Error: Flight HAT271 not available on date 2024-05-02",
        ),
        (
            {"flights": [{"flight_number": "HAT002", "date": "2024-05-24"}], "origin": "LGA", "destination": "PHX"},
            "Error: Not enough seats on flight HAT002",
        ),
        (
            {"payment_methods": [{"payment_id": "gift_card_0000000", "amount": 348}]},
            "Error: Payment method gift_card_0000000 not found",
        ),
        (
            {"payment_methods": [{"payment_id": "certificate_3887113", "amount": 348}]},
            "Error: Not enough balance in payment method certificate_3887113",
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_4196779", "amount": 300}]},
            "Error: Payment amount does not add up, total price is 348, but paid 300",
        ),
        (
            {"insurance": "yes", "nonfree_baggages": 1},
            "Error: Payment amount does not add up, total price is 458, but paid 348",
        ),
    ],
)
def test_book_reservation_failures_change_nothing(
    db: FlightDB, initial_hash: str, change: dict[str, Any], message: str
) -> None:
    assert err(db, "book_reservation", **{**BOOKING, **change}) == message
    assert AIRLINE.state_hash(db) == initial_hash


def test_book_reservation_validation_errors_are_pydantics_text(db: FlightDB, initial_hash: str) -> None:
    content = err(db, "book_reservation", **{**BOOKING, "cabin": "first"})
    # byte for byte what tau2-bench records (reference 1.4): the link names its pinned pydantic (2.12),
    # whichever pydantic is installed here, so its strict replay of this call scores instead of raising
    assert content == (
        "Error: 1 validation error for Reservation\ncabin\n  Input should be 'business', 'economy' or 'basic_economy' "
        "[type=literal_error, input_value='first', input_type=str]\n"
        "    For further information visit https://errors.pydantic.dev/2.12/v/literal_error"
    )
    content = err(db, "book_reservation", **{**BOOKING, "flights": [{"flight_number": "HAT271"}]})
    assert content.startswith("Error: 1 validation error for FlightInfo\ndate\n  Field required [type=missing")
    content = err(db, "book_reservation", **{**BOOKING, "payment_methods": [{"payment_id": "x", "amount": 100.5}]})
    assert content.startswith("Error: 1 validation error for Payment\namount\n")
    assert AIRLINE.state_hash(db) == initial_hash


def test_book_reservation_same_certificate_twice_fails_after_mutating(db: FlightDB, initial_hash: str) -> None:
    twice = [{"payment_id": "certificate_8045380", "amount": 174}, {"payment_id": "certificate_8045380", "amount": 174}]
    assert err(db, "book_reservation", **{**BOOKING, "payment_methods": twice}) == "Error: 'certificate_8045380'"
    assert "certificate_8045380" not in db.users["sophia_silva_7557"].payment_methods
    assert "HATHAT" not in db.reservations
    assert AIRLINE.state_hash(db) != initial_hash  # upstream does not roll back either


# ----- cancel_reservation -------------------------------------------------------------------------------------
def test_cancel_reservation_refunds_in_history_only(db: FlightDB) -> None:
    seats = {
        (f.flight_number, f.date): db.flights[f.flight_number].dates[f.date].model_dump()
        for f in db.reservations["EHGLP3"].flights
    }
    data = json.loads(ok(db, "cancel_reservation", reservation_id="EHGLP3"))
    assert data["status"] == "cancelled"
    assert data["payment_history"] == [
        {"payment_id": "credit_card_5832574", "amount": 208},
        {"payment_id": "credit_card_5832574", "amount": -208},
    ]
    for (number, day), before in seats.items():
        assert db.flights[number].dates[day].model_dump() == before  # no seat release
    # No eligibility checks and no already-cancelled check: a second call refunds the refunds.
    data = json.loads(ok(db, "cancel_reservation", reservation_id="EHGLP3"))
    assert [p["amount"] for p in data["payment_history"]] == [208, -208, -208, 208]
    assert err(db, "cancel_reservation", reservation_id="NOPE00") == "Error: Reservation NOPE00 not found"


# ----- send_certificate ---------------------------------------------------------------------------------------
def test_send_certificate_fixed_ids_and_float_amount(db: FlightDB) -> None:
    assert ok(db, "send_certificate", user_id="mia_li_3668", amount=100) == (
        "Certificate certificate_3221322 added to user mia_li_3668 with amount 100."
    )
    stored = db.users["mia_li_3668"].payment_methods["certificate_3221322"]
    assert stored.model_dump() == {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}
    assert list(db.users["mia_li_3668"].payment_methods)[-1] == "certificate_3221322"
    assert ok(db, "send_certificate", user_id="mia_li_3668", amount=50).startswith("Certificate certificate_3221323 ")
    assert ok(db, "send_certificate", user_id="mia_li_3668", amount=50).startswith("Certificate certificate_3221324 ")
    assert err(db, "send_certificate", user_id="mia_li_3668", amount=50) == "Error: Too many certificates"
    assert err(db, "send_certificate", user_id="nobody", amount=50) == "Error: User nobody not found"


# ----- update_reservation_baggages ----------------------------------------------------------------------------
def test_update_reservation_baggages_charges_only_new_paid_bags(db: FlightDB) -> None:
    data = json.loads(
        ok(
            db,
            "update_reservation_baggages",
            reservation_id="EHGLP3",
            total_baggages=2,
            nonfree_baggages=2,
            payment_id="credit_card_5832574",
        )
    )
    assert data["total_baggages"] == 2
    assert data["nonfree_baggages"] == 2
    assert data["payment_history"][-1] == {"payment_id": "credit_card_5832574", "amount": 100}
    # Lowering counts costs nothing and refunds nothing; no payment is recorded for 0.
    data = json.loads(
        ok(
            db,
            "update_reservation_baggages",
            reservation_id="EHGLP3",
            total_baggages=0,
            nonfree_baggages=0,
            payment_id="credit_card_5832574",
        )
    )
    assert (data["total_baggages"], data["nonfree_baggages"], len(data["payment_history"])) == (0, 0, 2)


def test_update_reservation_baggages_payment_errors(db: FlightDB, initial_hash: str) -> None:
    args = {"reservation_id": "WUNA5K", "total_baggages": 1, "nonfree_baggages": 0}
    assert (
        err(db, "update_reservation_baggages", **args, payment_id="credit_card_0") == "Error: Payment method not found"
    )
    # A certificate fails even when nothing is charged.
    assert err(db, "update_reservation_baggages", **args, payment_id="certificate_8045380") == (
        "Error: Certificate cannot be used to update reservation"
    )
    db.touch(db.users, "sophia_silva_7557")  # journal the test's own edit
    db.users["sophia_silva_7557"].payment_methods["gift_card_5094406"].amount = 10.0  # type: ignore[union-attr]
    assert err(
        db, "update_reservation_baggages", **{**args, "nonfree_baggages": 5}, payment_id="gift_card_5094406"
    ) == ("Error: Gift card balance is not enough")


def test_update_reservation_baggages_stores_raw_values(db: FlightDB) -> None:
    # No validation on assignment (as upstream): a float count is stored as a float and hashes differently.
    ok(
        db,
        "update_reservation_baggages",
        reservation_id="EHGLP3",
        total_baggages=1.0,
        nonfree_baggages=0,
        payment_id="credit_card_5832574",
    )
    assert isinstance(db.reservations["EHGLP3"].total_baggages, float)


# ----- update_reservation_flights -----------------------------------------------------------------------------
def test_update_reservation_flights_keeps_unchanged_segments_at_their_price(db: FlightDB) -> None:
    reservation = db.reservations["EHGLP3"]
    flights = [{"flight_number": f.flight_number, "date": f.date} for f in reservation.flights]
    seats_before = {
        (f["flight_number"], f["date"]): db.flights[f["flight_number"]].dates[f["date"]].model_dump() for f in flights
    }
    data = json.loads(
        ok(
            db,
            "update_reservation_flights",
            reservation_id="EHGLP3",
            cabin="basic_economy",
            flights=flights,
            payment_id="credit_card_5832574",
        )
    )
    assert [f["price"] for f in data["flights"]] == [50, 54]
    assert len(data["payment_history"]) == 1  # total difference 0: no payment recorded
    # A cabin change reprices every segment at today's price; seat counts never change.
    data = json.loads(
        ok(
            db,
            "update_reservation_flights",
            reservation_id="EHGLP3",
            cabin="business",
            flights=flights,
            payment_id="credit_card_5832574",
        )
    )
    assert data["cabin"] == "business"
    prices = [db.flights[f["flight_number"]].dates[f["date"]].prices["business"] for f in flights]  # type: ignore[union-attr]
    assert [f["price"] for f in data["flights"]] == prices
    assert data["payment_history"][-1] == {"payment_id": "credit_card_5832574", "amount": (sum(prices) - 104) * 2}
    for (number, day), before in seats_before.items():
        assert db.flights[number].dates[day].model_dump() == before


def test_update_reservation_flights_refunds_a_cheaper_itinerary_to_a_gift_card(db: FlightDB) -> None:
    # Task 11 moves GV1N64 to basic economy, paid/refunded through a gift card.
    gift = db.users[db.reservations["GV1N64"].user_id].payment_methods["gift_card_1642017"]
    before = gift.amount  # type: ignore[union-attr]
    data = json.loads(
        ok(
            db,
            "update_reservation_flights",
            reservation_id="GV1N64",
            cabin="basic_economy",
            flights=[
                {"flight_number": "HAT003", "date": "2024-05-19"},
                {"flight_number": "HAT290", "date": "2024-05-20"},
            ],
            payment_id="gift_card_1642017",
        )
    )
    refund = data["payment_history"][-1]
    assert refund["payment_id"] == "gift_card_1642017"
    assert refund["amount"] < 0
    assert gift.amount == before - refund["amount"]  # type: ignore[union-attr]


def test_update_reservation_flights_errors(db: FlightDB) -> None:
    flights = [{"flight_number": "HAT156", "date": "2024-05-17"}]
    args = {"reservation_id": "EHGLP3", "payment_id": "credit_card_5832574"}
    assert err(db, "update_reservation_flights", **args, cabin="first", flights=flights) == "Error: 'first'"
    assert err(
        db,
        "update_reservation_flights",
        **args,
        cabin="economy",
        flights=[{"flight_number": "HAT156", "date": "2024-05-01"}],
    ) == ("Error: Flight HAT156 not available on date 2024-05-01")
    assert err(
        db,
        "update_reservation_flights",
        **args,
        cabin="economy",
        flights=[{"flight_number": "HAT002", "date": "2024-05-24"}],
    ) == ("Error: Not enough seats on flight HAT002")
    assert (
        err(
            db,
            "update_reservation_flights",
            reservation_id="EHGLP3",
            cabin="basic_economy",
            flights=flights,
            payment_id="gift_card_1",
        )
        == "Error: Payment method not found"
    )


# ----- update_reservation_passengers --------------------------------------------------------------------------
def test_update_reservation_passengers(db: FlightDB) -> None:
    people = [
        {"first_name": "Evelyn", "last_name": "Taylor", "dob": "1965-01-16"},
        {"first_name": "Noah", "last_name": "Brown", "dob": "1990-02-03"},
    ]
    data = json.loads(ok(db, "update_reservation_passengers", reservation_id="EHGLP3", passengers=people))
    assert data["passengers"] == people
    assert err(db, "update_reservation_passengers", reservation_id="EHGLP3", passengers=people[:1]) == (
        "Error: Number of passengers does not match"
    )


WRITES: list[tuple[str, dict[str, Any]]] = [
    ("book_reservation", BOOKING),
    ("cancel_reservation", {"reservation_id": "EHGLP3"}),
    ("send_certificate", {"user_id": "mia_li_3668", "amount": 100}),
    (
        "update_reservation_baggages",
        {"reservation_id": "EHGLP3", "total_baggages": 3, "nonfree_baggages": 3, "payment_id": "credit_card_5832574"},
    ),
    (
        "update_reservation_flights",
        {
            "reservation_id": "GV1N64",
            "cabin": "basic_economy",
            "flights": [
                {"flight_number": "HAT003", "date": "2024-05-19"},
                {"flight_number": "HAT290", "date": "2024-05-20"},
            ],
            "payment_id": "gift_card_1642017",
        },
    ),
    (
        "update_reservation_passengers",
        {"reservation_id": "WUNA5K", "passengers": [{"first_name": "A", "last_name": "B", "dob": "2000-01-01"}]},
    ),
]


def test_every_write_tool_is_covered_here() -> None:
    assert sorted(name for name, _ in WRITES) == sorted(n for n in AIRLINE.toolset if AIRLINE.toolset[n].mutates)


@pytest.mark.parametrize(("name", "arguments"), WRITES, ids=[name for name, _ in WRITES])
def test_restore_undoes_each_write_tool(db: FlightDB, initial_hash: str, name: str, arguments: dict[str, Any]) -> None:
    ok(db, name, **arguments)
    assert AIRLINE.state_hash(db) != initial_hash
    db.restore()
    assert AIRLINE.state_hash(db) == initial_hash


def test_journaled_reset_equals_a_fresh_load(db: FlightDB, initial_hash: str, shared_data: Path) -> None:
    for name, arguments in WRITES:
        ok(db, name, **arguments)
    db.restore()
    assert AIRLINE.state_hash(load_db(shared_data / "tau2" / "airline" / "db.json")) == initial_hash
    assert AIRLINE.state_hash(db) == initial_hash
