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
required facts: the total price (and the flight numbers of a reported itinerary) or the variant's price.
Failure it targets: the paper's Appendix F.1, C1: reading the neighbouring cabin's price column (airline), or
taking the first listed variant that matches the one changed option (retail); the distractors make reading another
cabin's column, ignoring the departure time or ignoring sold-out seats each pick a different flight.
Example: seed 0 (airline): two travellers ask to book the cheapest economy flight MCO to MIA on 2024-05-16
leaving at or after 12:00; the reference searches, names HAT144 at $137 per passenger ($274) and books it; the
flawed solution reads the basic-economy column, picks HAT774 and pays $106, which the booking tool rejects, so the
state hash and the "$274" fact both fail.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from trace_envs.core import Capability, Domain, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import (
    AIRPORT_CITY,
    CABIN_LABEL,
    CABIN_PRICE_RANGES,
    CABINS,
    airline_flight,
    airline_user,
    available_on,
    credit_card,
)
from trace_envs.domains.retail.generator import CATALOG
from trace_envs.domains.retail.records import describe_options, retail_item, retail_order, retail_user
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_records import Record, four_digits, price_with_cents, unique_id

MISREAD_CABIN = {"basic_economy": "economy", "economy": "basic_economy", "business": "economy"}
"""The neighbouring price column a careless reader takes for the requested cabin."""
TRAVEL_DATES = tuple(f"2024-05-{day}" for day in range(16, 31))
"""Bookable dates (after the domain's "now", 2024-05-15)."""


class StructuredDataKnobs(Tau2Knobs):
    """Difficulty knobs of ``trace/structured-data-v0``."""

    distractors: int = Field(
        default=4, ge=1, le=8, description="Near-miss records: other itineraries (airline) or other variants (retail)."
    )
    onestop_share: float = Field(
        default=0.35, ge=0.0, le=1.0, description="Airline: share of tasks with no direct flight (one-stop routings)."
    )
    max_passengers: int = Field(default=2, ge=1, le=3, description="Airline: up to this many travellers per booking.")
    report_share: float = Field(
        default=0.25, ge=0.0, le=1.0, description="Share of tasks where the user only wants the record reported."
    )
    noise_records: int = Field(
        default=2, ge=0, le=10, description="Unrelated records: other flights (airline) or other orders (retail)."
    )


@dataclass(frozen=True)
class _Option:
    """One airline itinerary candidate: its legs, how it relates to the constraints, and its
    per-passenger price by cabin (a plain dataclass: it never crosses a boundary)."""

    kind: str
    flights: list[Record]
    totals: dict[str, int]


@dataclass(frozen=True)
class _Trip:
    """The airline request: route, date, cabin (and the column misread for it), shape and party size."""

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
        return MISREAD_CABIN[self.cabin]


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
        probe="trace_envs.analysis.probes:probe_structured",
        tau2_flaw="trace_envs.rollout.tau2_flaws:near_miss_argument",
        hint=(
            "The records you look up are nested: prices are listed per cabin, routings have several legs, "
            "products have several variants. Find the single entry that satisfies every constraint the user gave "
            "and read the exact field that holds the value you need. Check numbers against the record instead of "
            "estimating, and report each value exactly as the record states it."
        ),
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
    trip = _Trip(
        origin, destination, day, cabin, onestop, report, rng.randint(1, knobs.max_passengers), rng.randint(9, 12)
    )
    numbers = [f"HAT{n:03d}" for n in rng.sample(range(1, 1000), 2 * (knobs.distractors + 1) + knobs.noise_records)]
    hubs = rng.sample([c for c in codes if c not in (origin, destination)], knobs.distractors + 1)
    options, flights = _itinerary_options(rng, knobs, trip, numbers, hubs)
    for _ in range(knobs.noise_records):
        noise_from, noise_to = rng.sample([c for c in codes if c not in (origin, destination)], 2)
        seats = {c: rng.randint(0, 20) for c in CABINS}
        prices = {c: rng.randint(*CABIN_PRICE_RANGES[c]) for c in CABINS}
        number = numbers.pop()
        flights[number] = airline_flight(
            number, noise_from, noise_to, rng.randint(5, 20) * 60, {day: available_on(seats, prices)}
        )
    card_id = unique_id(rng, taken, "credit_card_", 7)
    gift_id = unique_id(rng, taken, "gift_card_", 7)
    methods = {
        card_id: credit_card(card_id, rng.choice(("visa", "mastercard")), four_digits(rng)),
        gift_id: {"source": "gift_card", "id": gift_id, "amount": float(rng.randint(0, 40))},
    }
    user = airline_user(rng, taken, methods, passengers=trip.passengers - 1)
    db = {"flights": flights, "users": {user["user_id"]: user}, "reservations": {}}
    return _itinerary_task(trip, options, db, user, methods[card_id])


def _itinerary_options(
    rng: random.Random, knobs: StructuredDataKnobs, trip: _Trip, numbers: list[str], hubs: list[str]
) -> tuple[list[_Option], dict[str, Record]]:
    """The target itinerary and its traps (shuffled), and their flights by number in creation order."""
    kinds: list[Any] = ["target", "misread"]
    kinds += [rng.choice(("early", "misread", "sold_out", "pricier")) for _ in range(knobs.distractors - 1)]
    rng.shuffle(kinds)
    target_prices = [
        {c: rng.randint(CABIN_PRICE_RANGES[c][0] + 10, CABIN_PRICE_RANGES[c][1] - 15) for c in CABINS}
        for _ in range(2 if trip.onestop else 1)
    ]
    earliest = trip.earliest
    late_hours = rng.sample(range(earliest, earliest + 10), len(kinds)) if not trip.onestop else None
    early_hours = rng.sample(range(5, earliest), min(len(kinds), earliest - 5))
    options: list[_Option] = []
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
    trip: _Trip,
    kind: str,
    legs: list[tuple[str, str]],
    start: int,
    numbers: list[str],
    target_prices: list[dict[str, int]],
) -> _Option:
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
    return _Option(kind=kind, flights=option_flights, totals=totals)


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


def _itinerary_task(trip: _Trip, options: list[_Option], db: Record, user: Record, card: Record) -> Task:
    """The itinerary task: the reference finds the target option; the flawed one the misread column's cheapest."""
    target = next(o for o in options if o.kind == "target")
    eligible = [o for o in options if o.kind in ("target", "misread", "pricier")]
    flawed = min(eligible, key=lambda o: (o.totals[trip.misread], o.flights[0]["flight_number"]))
    total = target.totals[trip.cabin] * trip.passengers
    origin, destination = trip.origin, trip.destination
    route = f"from {AIRPORT_CITY[origin]} ({origin}) to {AIRPORT_CITY[destination]} ({destination}) on {trip.day}"
    opening, solution = _itinerary_talk(trip, target, user, card, route)
    report = trip.report
    return Task(
        task_id="",
        initial_state=db,
        goal=f"{'Report' if report else 'Book'} the cheapest {trip.cabin} itinerary {route} leaving after "
        f"{trip.earliest}:00.",
        user=UserScript(
            opening=opening,
            facts=[UserFact(keys=["user id"], answer=f"My user id is {user['user_id']}.")],
            replies=["close"] if report else ["confirm", "close"],
        ),
        solution=solution,
        flawed_solution=_misread_solution(solution, flawed.flights, flawed.totals[trip.misread] * trip.passengers),
        # A report must name the itinerary; a booking is checked by the database, and must tell the total.
        required_facts=[*(f["flight_number"] for f in target.flights if report), f"${total}"],
        metadata={
            "variant": "airline",
            "mode": "report" if report else "book",
            "cabin": trip.cabin,
            "misread_cabin": trip.misread,
            "passengers": trip.passengers,
            "onestop": trip.onestop,
            "earliest_hour": trip.earliest,
            "option_kinds": [o.kind for o in options],
            "target_flights": [f["flight_number"] for f in target.flights],
            "flawed_flights": [f["flight_number"] for f in flawed.flights],
            "flawed_total": flawed.totals[trip.misread] * trip.passengers,
        },
    )


def _itinerary_talk(
    trip: _Trip, target: _Option, user: Record, card: Record, route: str
) -> tuple[str, list[ToolCall | str]]:
    """The user's opening and the reference solution: search and report, or look up, search, confirm and book."""
    cabin, passengers, earliest = trip.cabin, trip.passengers, trip.earliest
    total = target.totals[cabin] * passengers
    travellers = [
        {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]},
        *user["saved_passengers"],
    ]
    who = (
        "just me"
        if passengers == 1
        else "me and "
        + " and ".join(f"{p['first_name']} {p['last_name']} (saved in my profile)" for p in travellers[1:])
    )
    connection = " There may be no direct flight; a connection with one stop is fine." if trip.onestop else ""
    numbers_text = " + ".join(f["flight_number"] for f in target.flights)
    search = ToolCall(
        name="search_onestop_flight" if trip.onestop else "search_direct_flight",
        arguments={"origin": trip.origin, "destination": trip.destination, "date": trip.day},
    )
    summary = (
        f"The cheapest {CABIN_LABEL[cabin]} option {route} leaving at or after {earliest}:00 with seats for "
        f"{passengers} is {numbers_text} (departs {target.flights[0]['scheduled_departure_time_est']}): "
        f"${target.totals[cabin]} per passenger, ${total} in total"
    )
    if trip.report:
        return (
            f"Hi, I'm {user['name']['first_name']} {user['name']['last_name']}. I'm planning a one-way trip {route} "
            f"in {CABIN_LABEL[cabin]}, {who}, leaving no earlier than {earliest}:00.{connection} I'm not booking "
            "yet: please just tell me the cheapest option that fits, with its flight number and total price."
        ), [search, summary + "."]
    opening = (
        f"Hi, my user id is {user['user_id']}. Please book a one-way trip {route} in {CABIN_LABEL[cabin]}, "
        f"{who}, leaving no earlier than {earliest}:00: the cheapest option that fits.{connection} No checked "
        "bags and no travel insurance. Charge everything to my credit card."
    )
    booking = _booking(trip, target, user, travellers, card["id"], total)
    return opening, [
        ToolCall(name="get_user_details", arguments={"user_id": user["user_id"]}),
        search,
        f"{summary}, charged to your {card['brand']} card ending in {card['last_four']}, with no bags and no "
        "insurance. Shall I book it?",
        booking,
        f"Done: reservation HATHAT is booked on {numbers_text} in {CABIN_LABEL[cabin]}, ${total} in total.",
    ]


def _booking(
    trip: _Trip, target: _Option, user: Record, travellers: list[Record], card_id: str, total: int
) -> ToolCall:
    """The reference booking: the target's flights in the requested cabin for every traveller, no bags or insurance."""
    return ToolCall(
        name="book_reservation",
        arguments={
            "user_id": user["user_id"],
            "origin": trip.origin,
            "destination": trip.destination,
            "flight_type": "one_way",
            "cabin": trip.cabin,
            "flights": [{"flight_number": f["flight_number"], "date": trip.day} for f in target.flights],
            "passengers": travellers,
            "payment_methods": [{"payment_id": card_id, "amount": total}],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        },
    )


def _misread_solution(solution: list[ToolCall | str], flights: list[Record], total: int) -> list[ToolCall | str]:
    """The paper's failure: the neighbouring cabin's price column read, so the wrong itinerary picked and paid."""
    numbers = " + ".join(f["flight_number"] for f in flights)
    claim = f"The cheapest option is {numbers} at ${total} in total."
    if len(solution) == 2:  # a report
        return [solution[0], claim]
    booking = solution[3]
    assert isinstance(booking, ToolCall)
    arguments = dict(booking.arguments)
    date = booking.arguments["flights"][0]["date"]
    arguments["flights"] = [{"flight_number": f["flight_number"], "date": date} for f in flights]
    arguments["payment_methods"] = [{"payment_id": arguments["payment_methods"][0]["payment_id"], "amount": total}]
    wrong = ToolCall(name="book_reservation", arguments=arguments)
    return [*solution[:2], claim + " Shall I book it?", wrong, f"Done: {numbers} is booked, ${total} in total."]


# ----- variant (retail) -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Ask:
    """The retail request: how it is phrased, the changed option and value, the owned and the target options."""

    style: str
    key: str
    wanted: str
    current: dict[str, str]
    target: dict[str, str]
    price: float


def _build_variant(rng: random.Random, knobs: StructuredDataKnobs) -> Task:
    """Task kind ``variant``: the variant matching the described options, listed after a near miss."""
    taken: set[str] = set()
    names = rng.sample(sorted(CATALOG), 3)
    product = _product(rng, taken, names[0], {})
    ask, variants = _variant_rows(rng, knobs, CATALOG[names[0]])
    for combo, available, price in variants:
        item_id = unique_id(rng, taken, "", 10)
        product["variants"][item_id] = {"item_id": item_id, "options": combo, "available": available, "price": price}
    current_id = next(i for i, v in product["variants"].items() if v["options"] == ask.current)
    others = [_product(rng, taken, name, CATALOG[name][1], count=rng.randint(2, 3)) for name in names[1:]]
    method_id = unique_id(rng, taken, rng.choice(("credit_card_", "paypal_")), 7)
    method: Record = (
        credit_card(method_id, rng.choice(("visa", "mastercard")), four_digits(rng))
        if method_id.startswith("credit")
        else {"source": "paypal", "id": method_id}
    )
    user = retail_user(rng, taken, {method_id: method})
    report = rng.random() < knobs.report_share
    status = "delivered" if rng.random() < 0.5 else "pending"
    items = [retail_item(product, current_id)]
    for extra in others[: rng.randint(0, 2)]:
        items.append(retail_item(extra, rng.choice(list(extra["variants"]))))
    rng.shuffle(items)
    order = retail_order(rng, taken, user, items, status, method_id)
    orders = {order["order_id"]: order}
    for _ in range(knobs.noise_records):
        extra = rng.choice(others)
        item = retail_item(extra, rng.choice(list(extra["variants"])))
        noise = retail_order(rng, taken, user, [item], rng.choice(("delivered", "processed")), method_id)
        orders[noise["order_id"]] = noise
    db = {
        "products": {p["product_id"]: p for p in [product, *others]},
        "users": {user["user_id"]: user},
        "orders": orders,
    }
    mode = "report" if report else ("exchange" if status == "delivered" else "modify")
    return _variant_task(ask, mode, db, product, order, user, method_id)


def _variant_rows(
    rng: random.Random, knobs: StructuredDataKnobs, entry: tuple[tuple[float, float], dict[str, tuple[str, ...]]]
) -> tuple[_Ask, list[tuple[dict[str, str], bool, float]]]:
    """The request and the product's variant rows (options, available, price): the near miss before the target."""
    (low, high), options = entry
    keys = list(options)
    style = rng.choice(("relative", "explicit", "cheapest"))
    key = rng.choice([k for k in keys if len(options[k]) >= 2])
    other_key = rng.choice([k for k in keys if k != key])
    current = {k: rng.choice(options[k]) for k in keys}
    wanted = rng.choice([v for v in options[key] if v != current[key]])
    target_options = {**current, key: wanted}
    if style != "relative":  # spelled out or "cheapest": the other options need not match the current item
        target_options = {k: (wanted if k == key else rng.choice(options[k])) for k in keys}
    near_options = {
        **target_options,
        other_key: rng.choice([v for v in options[other_key] if v != target_options[other_key]]),
    }
    target_price = price_with_cents(rng, low + 10, high - 10)
    trap_price = (
        price_with_cents(rng, low, target_price - 1) if style == "cheapest" else price_with_cents(rng, low, high)
    )
    if abs(trap_price - target_price) < 0.01:
        trap_price = round(trap_price + 1.11, 2)
    variants: list[tuple[dict[str, str], bool, float]] = [
        (current, True, price_with_cents(rng, low, high)),
        (near_options, style != "cheapest", trap_price),
    ]
    for _ in range(knobs.distractors - 1):
        combo = {k: rng.choice(v) for k, v in options.items()}
        if all(combo != existing for existing, _, _ in variants) and combo != target_options:
            variants.append((combo, rng.random() < 0.7, price_with_cents(rng, low, high)))
    rng.shuffle(variants)
    trap_at = next(i for i, v in enumerate(variants) if v[0] == near_options)
    variants.insert(rng.randint(trap_at + 1, len(variants)), (target_options, True, target_price))
    for index, (combo, available, price) in enumerate(variants):
        if (
            style == "cheapest"
            and combo[key] == wanted
            and available
            and price <= target_price
            and combo != target_options
        ):
            variants[index] = (combo, available, round(target_price + rng.randint(2, 40) + 0.37, 2))
    shown = f"{target_price:.2f}"
    variants = [  # no other price may contain the target's as a substring (required facts are substrings)
        (c, a, round(p + 1.11, 2) if c != target_options and shown in f"{p:.2f}" else p) for c, a, p in variants
    ]
    return _Ask(style, key, wanted, current, target_options, target_price), variants


def _variant_task(
    ask: _Ask, mode: str, db: Record, product: Record, order: Record, user: Record, method_id: str
) -> Task:
    """The variant task: the reference names the matching variant; the flawed one the first partial match."""
    variants = product["variants"]
    current_id = next(i for i, v in variants.items() if v["options"] == ask.current)
    target_id = next(i for i, v in variants.items() if v["options"] == ask.target)
    flawed_id = next(i for i, v in variants.items() if v["options"][ask.key] == ask.wanted and i != current_id)
    price_text, report = f"{ask.price:.2f}", mode == "report"
    request, opening, solution = _variant_talk(ask, mode, product, order, user, method_id, (current_id, target_id))
    flawed_price = product["variants"][flawed_id]["price"]
    return Task(
        task_id="",
        initial_state=db,
        goal=f"{'Report the price of' if report else 'Switch to'} {request} in order {order['order_id']}.",
        user=UserScript(
            opening=opening,
            facts=[
                UserFact(keys=["email"], answer=f"My email is {user['email']}."),
                UserFact(keys=["order id", "order number"], answer=f"The order is {order['order_id']}."),
            ],
            replies=["close"] if report else ["confirm", "close"],
        ),
        solution=solution,
        flawed_solution=_first_match_solution(solution, flawed_id, flawed_price),
        required_facts=[price_text],
        metadata={
            "variant": "retail",
            "mode": mode,
            "style": ask.style,
            "option": ask.key,
            "value": ask.wanted,
            "target_item": target_id,
            "flawed_item": flawed_id,
            "flawed_price": flawed_price,
        },
    )


def _variant_talk(
    ask: _Ask, mode: str, product: Record, order: Record, user: Record, method_id: str, ids: tuple[str, str]
) -> tuple[str, str, list[ToolCall | str]]:
    """The request, the user's opening and the reference solution: look up, then report, or confirm and switch."""
    (current_id, target_id), noun, price_text = ids, product["name"].lower(), f"{ask.price:.2f}"
    request = _variant_request(ask, noun)
    lookups: list[ToolCall | str] = [
        ToolCall(name="find_user_id_by_email", arguments={"email": user["email"]}),
        ToolCall(name="get_order_details", arguments={"order_id": order["order_id"]}),
        ToolCall(name="get_product_details", arguments={"product_id": product["product_id"]}),
    ]
    found = f"The item that matches is {target_id} ({describe_options(ask.target)}), priced at ${price_text}"
    if mode == "report":
        opening = (
            f"Hi, my email is {user['email']}. In order {order['order_id']} I bought a {noun}. Before I decide "
            f"anything: how much is {request}? Please just tell me its price."
        )
        solution: list[ToolCall | str] = [*lookups, found + "."]
    else:
        verb = "exchange" if mode == "exchange" else "change"
        opening = (
            f"Hi, my email is {user['email']}. In order {order['order_id']} I'd like to {verb} my {noun} for "
            f"{request}. Use the payment method of the order for any difference."
        )
        write = ToolCall(
            name="exchange_delivered_order_items" if mode == "exchange" else "modify_pending_order_items",
            arguments={
                "order_id": order["order_id"],
                "item_ids": [current_id],
                "new_item_ids": [target_id],
                "payment_method_id": method_id,
            },
        )
        solution = [
            *lookups,
            f"{found}; the difference goes to {method_id}. Shall I proceed with the {verb}?",
            write,
            f"Done: your {noun} in order {order['order_id']} will be replaced by item {target_id} (${price_text}).",
        ]
    return request, opening, solution


def _variant_request(ask: _Ask, noun: str) -> str:
    """How the user names the variant they want: relative to the owned item, spelled out, or the cheapest."""
    if ask.style == "relative":
        return f"the same {noun} as the one I have, but with {ask.key} {ask.wanted} (everything else the same)"
    if ask.style == "explicit":
        return f"the {noun} with {describe_options(ask.target)}"
    return f"the cheapest {noun} with {ask.key} {ask.wanted} that is in stock"


def _first_match_solution(solution: list[ToolCall | str], item: str, price: float) -> list[ToolCall | str]:
    """The paper's failure: the first listed variant that matches the one changed option."""
    claim = f"The item that matches is {item}, priced at ${price:.2f}"
    if len(solution) == 4:  # a report
        return [*solution[:3], claim + "."]
    write = solution[4]
    assert isinstance(write, ToolCall)
    wrong = ToolCall(name=write.name, arguments={**write.arguments, "new_item_ids": [item]})
    return [*solution[:3], claim + ". Shall I proceed?", wrong, f"Done: your item is replaced by {item}."]


def _product(
    rng: random.Random, taken: set[str], name: str, options: dict[str, tuple[str, ...]], count: int = 0
) -> Record:
    """A product record with ``count`` random distinct variants (none when ``count`` is 0)."""
    product: Record = {"name": name, "product_id": unique_id(rng, taken, "", 10), "variants": {}}
    (low, high), _ = CATALOG[name]
    seen: list[dict[str, str]] = []
    for _ in range(count):
        combo = {k: rng.choice(v) for k, v in options.items()}
        if combo in seen:
            continue
        seen.append(combo)
        item_id = unique_id(rng, taken, "", 10)
        product["variants"][item_id] = {
            "item_id": item_id,
            "options": combo,
            "available": True,
            "price": price_with_cents(rng, low, high),
        }
    return product
