"""``trace/structured-data-v0``: find the one record that satisfies the user's constraints in nested data.

Capability: structured_data_reasoning — search, filter and cross-reference nested tool records to find the one
record or value that fits every constraint of the user's request.
Domain: airline or retail (the ``variant`` knob) — airline reads per-cabin prices and seats from
``search_direct_flight`` / ``search_onestop_flight`` and books; retail reads a product's variants from
``get_product_details`` and exchanges or modifies an order item.
Task kinds: itinerary: the cheapest itinerary in a cabin, leaving after an hour, with seats for every passenger,
booked or reported (airline); variant: the product variant whose options match the user's description (relative
to the owned item, spelled out, or the cheapest in stock), exchanged/modified or its price reported (retail).
Knobs: variant (default airline): the domain; distractors (default 4): near-miss itineraries or variants;
onestop_share (default 0.35): airline tasks with no direct flight; max_passengers (default 2): airline travellers;
report_share (default 0.25): tasks that only report the record; noise_records (default 2): unrelated flights/orders.
Verifier: the gold state hash (the booking or item swap on the right record, or no change for a report) and the
required facts: the total price (and a reported itinerary's flight numbers) or the variant's price (no other's).
Failure it targets: the paper's Appendix F.1, C1: reading the neighbouring cabin's price column (airline), or
taking the first listed variant that matches the one changed option (retail); the distractors make reading another
cabin's column, ignoring the departure time or ignoring sold-out seats each pick a different flight.
Example: seed 0 (airline): two travellers ask to book the cheapest economy flight MCO to MIA on 2024-05-16 at or
after 12:00; the reference searches, names HAT144 at $137 per passenger ($274) and books it; the flawed solution
reads the basic-economy column and picks HAT774 at $106, which the tool rejects: the hash and "$274" both fail.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import Field

from generated_envs.kits.structured_data.itineraries import (
    TRAVEL_DATES,
    Option,
    Trip,
    booking_arguments,
    found_itinerary,
    itinerary_options,
    noise_flights,
)
from generated_envs.kits.structured_data.variants import Ask, asked_orders, asked_products
from generated_envs.probes.structured_data import probe_structured
from trace_envs.core import Capability, Domain, Plan, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import AIRPORT_CITY, CABIN_LABEL, CABINS, airline_user
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail.records import card_or_paypal, describe_options, retail_user
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_flaws import near_miss_argument
from trace_envs.domains.tau2_records import Record, credit_card, four_digits, unique_id


class StructuredDataKnobs(Tau2Knobs):
    """Difficulty knobs of ``trace/structured-data-v0``."""

    distractors: int = Field(default=4, ge=1, le=8, description="Near-miss itineraries (airline) or variants (retail).")
    onestop_share: float = Field(
        default=0.35, ge=0.0, le=1.0, description="Airline: share of tasks with no direct flight (one-stop routings)."
    )
    max_passengers: int = Field(default=2, ge=1, le=3, description="Airline: up to this many travellers per booking.")
    report_share: float = Field(
        default=0.25, ge=0.0, le=1.0, description="Share of tasks where the user only wants the record reported."
    )
    noise_records: int = Field(default=2, ge=0, le=10,
                               description="Unrelated records: other flights (airline) or other orders (retail).")  # fmt: skip


class StructuredDataEnv(Tau2VariantEnv[StructuredDataKnobs]):
    """Search, filter and cross-reference nested records to find the one the user asked for, then act on it."""

    capability = Capability(
        name="structured_data_reasoning",
        description=(
            "Reading nested structured records returned by tools (per-cabin price tables, flight routings, item "
            "variants with options) and searching, filtering and cross-referencing them to find the one record or "
            "value that satisfies the user's constraints; lacking when the agent reports or uses a value from the "
            "wrong record or field, or a number that the records do not support."
        ),
        probe=probe_structured,
        flaws={"tau2": near_miss_argument},
        hint="Records nest: per-cabin prices, multi-leg routings, product variants. Find the one entry meeting every "
        "constraint the user gave, read the exact field you need, and state numbers exactly as the record has them.",
    )
    domain: Domain[Any] = AIRLINE
    max_turns = 14

    def generate(self, rng: random.Random) -> Task:
        if self.knobs.variant == "airline":
            return _build_itinerary(rng, self.knobs)
        return _build_variant(rng, self.knobs)


# ----- itinerary (airline) ----------------------------------------------------------------------------------
def _build_itinerary(rng: random.Random, knobs: StructuredDataKnobs) -> Task:
    """Task kind ``itinerary``: the cheapest fitting itinerary among traps that each misread one constraint."""
    taken: set[str] = set()
    codes = sorted(AIRPORT_CITY)
    origin, destination = rng.sample(codes, 2)
    day, cabin = rng.choice(TRAVEL_DATES), rng.choice(CABINS)
    onestop, report = rng.random() < knobs.onestop_share, rng.random() < knobs.report_share
    trip = Trip(
        origin, destination, day, cabin, onestop, report, rng.randint(1, knobs.max_passengers), rng.randint(9, 12)
    )
    numbers = [f"HAT{n:03d}" for n in rng.sample(range(1, 1000), 2 * (knobs.distractors + 1) + knobs.noise_records)]
    others = [c for c in codes if c not in (origin, destination)]
    options, flights = itinerary_options(
        rng, knobs.distractors, trip, numbers, rng.sample(others, knobs.distractors + 1)
    )
    noise_flights(rng, flights, knobs.noise_records, others, day, numbers)
    card_id = unique_id(rng, taken, "credit_card_", 7)
    gift_id = unique_id(rng, taken, "gift_card_", 7)
    methods = {
        card_id: credit_card(card_id, rng.choice(("visa", "mastercard")), four_digits(rng)),
        gift_id: {"source": "gift_card", "id": gift_id, "amount": float(rng.randint(0, 40))},
    }
    user = airline_user(rng, taken, methods, passengers=trip.passengers - 1)
    db = {"flights": flights, "users": {user["user_id"]: user}, "reservations": {}}
    return _itinerary_task(trip, options, Plan(AIRLINE, db), user)


def _itinerary_task(trip: Trip, options: list[Option], plan: Plan, user: Record) -> Task:
    """The itinerary task: the reference finds the target option; the flawed one the misread column's cheapest."""
    target = next(o for o in options if o.kind == "target")
    eligible = [o for o in options if o.kind in ("target", "misread", "pricier")]
    flawed = min(eligible, key=lambda o: (o.totals[trip.misread], o.flights[0]["flight_number"]))
    origin, destination = trip.origin, trip.destination
    route = f"from {AIRPORT_CITY[origin]} ({origin}) to {AIRPORT_CITY[destination]} ({destination}) on {trip.day}"
    total, found = _plan_itinerary(trip, target, plan, user["user_id"], route)
    flawed_total = sum(leg.prices[trip.misread] for leg in found_itinerary(found, flawed.numbers)) * trip.passengers
    report = trip.report
    return plan.task(
        goal=f"{'Report' if report else 'Book'} the cheapest {trip.cabin} itinerary {route} leaving after "
        f"{trip.earliest}:00.",
        user=UserScript(
            opening=_itinerary_opening(trip, user, route),
            facts=[UserFact(keys=["user id"], answer=f"My user id is {user['user_id']}.")],
        ),
        flawed_solution=_misread_solution(plan.steps, flawed.numbers, flawed_total),
        # A report must name the itinerary; a booking is checked by the database, and must tell the total.
        required_facts=[*(target.numbers if report else []), f"${total}"],
        metadata={"variant": "airline", "mode": "report" if report else "book", "cabin": trip.cabin,
                  "misread_cabin": trip.misread, "passengers": trip.passengers, "onestop": trip.onestop,
                  "earliest_hour": trip.earliest, "option_kinds": [o.kind for o in options],
                  "target_flights": target.numbers, "flawed_flights": flawed.numbers, "flawed_total": flawed_total},
    )  # fmt: skip


def _itinerary_opening(trip: Trip, user: Record, route: str) -> str:
    """What the user asks: a report of the cheapest fitting option, or its booking, for them and saved passengers."""
    cabin, earliest = CABIN_LABEL[trip.cabin], trip.earliest
    names = [f"{p['first_name']} {p['last_name']} (saved in my profile)" for p in user["saved_passengers"]]
    who = "just me" if trip.passengers == 1 else "me and " + " and ".join(names)
    connection = " There may be no direct flight; a connection with one stop is fine." if trip.onestop else ""
    if trip.report:
        return (
            f"Hi, I'm {user['name']['first_name']} {user['name']['last_name']}. I'm planning a one-way trip {route} "
            f"in {cabin}, {who}, leaving no earlier than {earliest}:00.{connection} I'm not booking "
            "yet: please just tell me the cheapest option that fits, with its flight number and total price."
        )
    return (
        f"Hi, my user id is {user['user_id']}. Please book a one-way trip {route} in {cabin}, "
        f"{who}, leaving no earlier than {earliest}:00: the cheapest option that fits.{connection} No checked "
        "bags and no travel insurance. Charge everything to my credit card."
    )


def _plan_itinerary(trip: Trip, target: Option, plan: Plan, user_id: str, route: str) -> tuple[int, list[Any]]:
    """The reference: search and report, or look the user up, search, confirm and book; prices, times,
    travellers, the card and the reservation id are the tools' results. Returns the total and the search's results."""
    cabin, passengers = trip.cabin, trip.passengers
    customer = None if trip.report else plan.call("get_user_details", user_id=user_id)
    search = "search_onestop_flight" if trip.onestop else "search_direct_flight"
    found = plan.call(search, origin=trip.origin, destination=trip.destination, date=trip.day)
    legs = found_itinerary(found, target.numbers)
    price = sum(leg.prices[cabin] for leg in legs)
    total, numbers_text = price * passengers, " + ".join(target.numbers)
    summary = (
        f"The cheapest {CABIN_LABEL[cabin]} option {route} leaving at or after {trip.earliest}:00 with seats for "
        f"{passengers} is {numbers_text} (departs {legs[0].scheduled_departure_time_est}): "
        f"${price} per passenger, ${total} in total"
    )
    if customer is None:
        plan.say(summary + ".")
        return total, found
    card = next(m for m in customer.payment_methods.values() if m.source == "credit_card")
    plan.confirm(
        f"{summary}, charged to your {card.brand} card ending in {card.last_four}, with no bags and no "
        "insurance. Shall I book it?"
    )
    booked = plan.call("book_reservation", **booking_arguments(trip, target.numbers, customer, card.id, total))
    plan.say(f"Done: reservation {booked.reservation_id} is booked on {numbers_text} in {CABIN_LABEL[cabin]}, "
             f"${total} in total.")  # fmt: skip
    return total, found


def _misread_solution(solution: list[ToolCall | str], flights: list[str], total: int) -> list[ToolCall | str]:
    """The paper's failure: the neighbouring cabin's price column read, so the wrong itinerary picked and paid."""
    numbers = " + ".join(flights)
    claim = f"The cheapest option is {numbers} at ${total} in total."
    if len(solution) == 2:  # a report
        return [solution[0], claim]
    booking = solution[3]
    assert isinstance(booking, ToolCall)
    arguments = dict(booking.arguments)
    date = booking.arguments["flights"][0]["date"]
    arguments["flights"] = [{"flight_number": number, "date": date} for number in flights]
    arguments["payment_methods"] = [{"payment_id": arguments["payment_methods"][0]["payment_id"], "amount": total}]
    wrong = ToolCall(name="book_reservation", arguments=arguments)
    return [*solution[:2], claim + " Shall I book it?", wrong, f"Done: {numbers} is booked, ${total} in total."]


# ----- variant (retail) -------------------------------------------------------------------------------------
def _build_variant(rng: random.Random, knobs: StructuredDataKnobs) -> Task:
    """Task kind ``variant``: the variant matching the described options, listed after a near miss."""
    taken: set[str] = set()
    ask, product, others = asked_products(rng, taken, knobs.distractors)
    current_id = next(i for i, v in product["variants"].items() if v["options"] == ask.current)
    user = retail_user(rng, taken, dict([card_or_paypal(rng, taken)]))
    report = rng.random() < knobs.report_share
    status = "delivered" if rng.random() < 0.5 else "pending"
    orders = asked_orders(rng, taken, user, (product, current_id), others, status, knobs.noise_records)
    db = {"products": {p["product_id"]: p for p in [product, *others]}, "users": {user["user_id"]: user}}
    db["orders"] = orders
    mode = "report" if report else ("exchange" if status == "delivered" else "modify")
    return _variant_task(ask, mode, Plan(RETAIL, db), product, next(iter(orders)), user)


def _variant_task(ask: Ask, mode: str, plan: Plan, product: Record, order_id: str, user: Record) -> Task:
    """The variant task: the reference names the matching variant; the flawed one the first partial match."""
    noun, report = product["name"].lower(), mode == "report"
    listed, current_id, target_id = _plan_variant(ask, mode, plan, product["product_id"], noun, order_id, user["email"])
    flawed_id = next(i for i, v in listed.items() if v.options[ask.key] == ask.wanted and i != current_id)
    flawed_price = listed[flawed_id].price
    return plan.task(
        goal=f"{'Report the price of' if report else 'Switch to'} {ask.request(noun)} in order {order_id}.",
        user=UserScript(
            opening=_variant_opening(ask, mode, noun, order_id, user["email"]),
            facts=[
                UserFact(keys=["email"], answer=f"My email is {user['email']}."),
                UserFact(keys=["order id", "order number"], answer=f"The order is {order_id}."),
            ],
        ),
        flawed_solution=_first_match_solution(plan.steps, flawed_id, flawed_price),
        required_facts=[f"{listed[target_id].price:.2f}"],
        forbidden_facts=sorted({f"{v.price:.2f}" for v in listed.values()} - {f"{listed[target_id].price:.2f}"}),
        metadata={"variant": "retail", "mode": mode, "style": ask.style, "option": ask.key, "value": ask.wanted,
                  "target_item": target_id, "flawed_item": flawed_id, "flawed_price": flawed_price},
    )  # fmt: skip


def _variant_opening(ask: Ask, mode: str, noun: str, order_id: str, email: str) -> str:
    """What the user asks: the price of the variant they describe, or to switch their item to it."""
    if mode == "report":
        return (
            f"Hi, my email is {email}. In order {order_id} I bought a {noun}. Before I decide "
            f"anything: how much is {ask.request(noun)}? Please just tell me its price."
        )
    return (
        f"Hi, my email is {email}. In order {order_id} I'd like to {'exchange' if mode == 'exchange' else 'change'} "
        f"my {noun} for {ask.request(noun)}. Use the payment method of the order for any difference."
    )


def _plan_variant(
    ask: Ask, mode: str, plan: Plan, product_id: str, noun: str, order_id: str, email: str
) -> tuple[dict[str, Any], str, str]:
    """The reference: look up, then report, or confirm and switch; the owned item, the matching variant, its price
    and the order's payment method are the tools' results. Returns the variants as listed, the owned and target ids."""
    plan.call("find_user_id_by_email", email=email)
    order = plan.call("get_order_details", order_id=order_id)
    listed = plan.call("get_product_details", product_id=product_id).variants
    current_id = next(item.item_id for item in order.items if item.product_id == product_id)
    target_id = next(i for i, v in listed.items() if v.options == ask.target)
    price_text, options = f"{listed[target_id].price:.2f}", describe_options(listed[target_id].options)
    found = f"The item that matches is {target_id} ({options}), priced at ${price_text}"
    if mode == "report":
        plan.say(found + ".")
        return listed, current_id, target_id
    verb = "exchange" if mode == "exchange" else "change"
    method_id = order.payment_history[0].payment_method_id  # the order's own method settles the difference
    plan.confirm(f"{found}; the difference goes to {method_id}. Shall I proceed with the {verb}?")
    plan.call(
        "exchange_delivered_order_items" if mode == "exchange" else "modify_pending_order_items",
        order_id=order_id,
        item_ids=[current_id],
        new_item_ids=[target_id],
        payment_method_id=method_id,
    )
    plan.say(f"Done: your {noun} in order {order_id} will be replaced by item {target_id} (${price_text}).")
    return listed, current_id, target_id


def _first_match_solution(solution: list[ToolCall | str], item: str, price: float) -> list[ToolCall | str]:
    """The paper's failure: the first listed variant that matches the one changed option."""
    claim = f"The item that matches is {item}, priced at ${price:.2f}"
    if len(solution) == 4:  # a report
        return [*solution[:3], claim + "."]
    write = solution[4]
    assert isinstance(write, ToolCall)
    wrong = ToolCall(name=write.name, arguments={**write.arguments, "new_item_ids": [item]})
    return [*solution[:3], claim + ". Shall I proceed?", wrong, f"Done: your item is replaced by {item}."]
