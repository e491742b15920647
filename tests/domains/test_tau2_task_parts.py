"""The domain-side task parts the tau2 capability envs build on: itinerary lookup in search results, the
multi-step part's plan, the variant request wording, and the retail address arguments."""

from __future__ import annotations

import random

import pytest

from generated_envs.kits.multi_step.airline_requests import ADD_BAGS, CANCEL_RESERVATION, draw_cancel
from generated_envs.kits.structured_data.itineraries import Trip, found_itinerary, itinerary_options
from generated_envs.kits.structured_data.variants import Ask
from trace_envs.core import Plan, ToolCall
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import AIRLINE_NOW, AirlineRecords
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail.records import ADDRESS_FIELDS, address_arguments, retail_user
from trace_envs.domains.tau2_records import credit_card, named_card
from trace_envs.domains.tau2_requests import finish_part


def _trip(onestop: bool) -> Trip:
    return Trip("JFK", "LAX", "2024-05-20", "economy", onestop, False, 2, 10)


@pytest.mark.parametrize("onestop", [False, True])
def test_found_itinerary_reads_the_target_s_legs_from_a_real_search(onestop: bool) -> None:
    rng = random.Random(3)
    trip = _trip(onestop)
    numbers = [f"HAT{n:03d}" for n in range(100, 112)]
    options, flights = itinerary_options(rng, 3, trip, numbers, ["ORD", "DEN", "ATL", "SEA"])
    plan = Plan(AIRLINE, {"flights": flights, "users": {}, "reservations": {}})
    search = "search_onestop_flight" if onestop else "search_direct_flight"
    found = plan.call(search, origin="JFK", destination="LAX", date=trip.day)
    target = next(o for o in options if o.kind == "target")
    legs = found_itinerary(found, target.numbers)
    assert [leg.flight_number for leg in legs] == target.numbers
    assert sum(leg.prices["economy"] for leg in legs) == target.totals["economy"]
    with pytest.raises(LookupError, match="HAT999"):
        found_itinerary(found, ["HAT999"])


def test_a_cancel_part_states_the_refund_the_reservation_lists_and_plans_read_confirm_write() -> None:
    rng = random.Random(5)
    db = AirlineRecords(rng)
    user = db.add_user()
    part = draw_cancel(rng, db, user)
    plan = Plan(AIRLINE, db.state())
    customer = plan.call("get_user_details", user_id=user["user_id"])
    sub = part(plan, customer)
    reservation = next(iter(db.reservations.values()))
    paid = int(sum(p["amount"] for p in reservation["payment_history"]))
    assert sub.facts == [str(paid)] and f"${paid}" in sub.confirm
    assert plan.steps[1:] == [*sub.reads, sub.confirm, sub.write]
    assert sub.write.name == "cancel_reservation" and plan.replies == ["confirm"]
    assert plan.state.reservations[reservation["reservation_id"]].status == "cancelled"  # the write ran


def test_finish_part_fails_loudly_when_the_write_fails() -> None:
    plan = Plan(AIRLINE, {"flights": {}, "users": {}, "reservations": {}})
    with pytest.raises(RuntimeError, match="cancel_reservation"):
        finish_part(plan, 0, "bags", ADD_BAGS, ("cancel_reservation", {"reservation_id": "NOPE00"}), rid="NOPE00",
                    extra=1, noun="bag", total=1, nonfree=0, cost="none")  # fmt: skip


def test_finish_part_takes_only_the_calls_after_start_as_reads() -> None:
    rng = random.Random(1)
    db = AirlineRecords(rng)
    user = db.add_user()
    rid = db.add_reservation(user, cabin="business", created_at=AIRLINE_NOW, insurance="no")["reservation_id"]
    plan = Plan(AIRLINE, db.state())
    plan.call("get_user_details", user_id=user["user_id"])
    start = len(plan.steps)
    plan.call("get_reservation_details", reservation_id=rid)
    values = {"rid": rid, "reason": "x", "grounds": "y", "refund": "$1"}
    sub = finish_part(
        plan, start, "cancel", CANCEL_RESERVATION, ("cancel_reservation", {"reservation_id": rid}), **values
    )
    assert sub.reads == [ToolCall(name="get_reservation_details", arguments={"reservation_id": rid})]
    assert sub.confirm.endswith("Shall I proceed?") and sub.request == f"please cancel reservation {rid} because x"


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("relative", "the same shirt as the one I have, but with color red (everything else the same)"),
        ("explicit", "the shirt with color: red, size: M"),
        ("cheapest", "the cheapest shirt with color red that is in stock"),
    ],
)
def test_ask_request_names_the_variant_in_the_customer_s_words(style: str, expected: str) -> None:
    ask = Ask(style, "color", "red", {"color": "blue", "size": "M"}, {"color": "red", "size": "M"}, 12.34)
    assert ask.request("shirt") == expected


def test_address_arguments_are_the_tools_fields_in_order() -> None:
    address = {"zip": "10001", "city": "New York", "address1": "1 Main St", "address2": "", "state": "NY",
               "country": "USA", "extra": "ignored"}  # fmt: skip
    assert list(address_arguments(address)) == list(ADDRESS_FIELDS)
    assert address_arguments(address)["zip"] == "10001"


def test_named_card_is_the_card_with_the_named_brand_and_digits_not_its_near_miss() -> None:
    rng = random.Random(2)
    methods = {
        "credit_card_1": credit_card("credit_card_1", "visa", "4812"),
        "credit_card_2": credit_card("credit_card_2", "visa", "4821"),
        "credit_card_3": credit_card("credit_card_3", "mastercard", "4821"),
        "paypal_4": {"source": "paypal", "id": "paypal_4"},
    }
    user = retail_user(rng, set(), methods)
    plan = Plan(RETAIL, {"products": {}, "users": {user["user_id"]: user}, "orders": {}})
    listed = plan.call("get_user_details", user_id=user["user_id"]).payment_methods
    assert named_card(listed, {"brand": "visa", "last_four": "4821"}) == "credit_card_2"
    assert named_card(listed, {"brand": "mastercard", "last_four": "4821"}) == "credit_card_3"
    with pytest.raises(LookupError, match="amex card ending in 4821"):
        named_card(listed, {"brand": "amex", "last_four": "4821"})
