"""``trace/tool-precision-v0``: the right tool with exactly the right arguments among near-miss values.

Capability: tool_calling_precision — call the right tool with exactly the argument values just read, not a near-miss.
Domain: retail, variants: retail, airline — tau2's real tools and state: retail orders and payment methods, airline
reservations, bags and payment methods, each profile holding near-miss cards, gift cards and twin item variants.
Task kinds: return: refund one of two twin items to the order's original card, not the profile's gift card;
payment_change: switch a pending order to the card the user names, not the one ending in swapped digits;
bags: add paid checked bags to a reservation with exact totals, charged to the named card, not a near-miss one.
Knobs: variant (default retail): target domain; near_miss_methods (default 2): payment methods besides the right one
and the gift card; twin_items (default True): the order holds two variants of the returned product;
payment_change_share (default 0.4): retail share of payment-change tasks; distractor_records (default 2): other
orders or reservations of the same user.
Verifier: the gold state hash (the write with the exact order/reservation, item ids, bag counts and payment id); no
required facts or reads beyond it.
Failure it targets: the paper's Appendix F.1, C2: the right tool with a near-miss argument: the gift card instead of
the order's credit card (retail return), the near-miss card elsewhere.
Example: retail seed 0 asks to return one item of a delivered order "to the original payment method"; the reference
looks up the user and the order, confirms and calls ``return_delivered_order_items`` with the order's credit card;
the flawed solution makes the same call with the profile's gift card, so the refund lands elsewhere and the hash
differs.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import ConfigDict, Field

from trace_envs.core import Capability, Domain, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline.tools import NEW_CERTIFICATE_IDS
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail.generator import CATALOG

from ._tau2_env import Tau2Knobs, Tau2VariantEnv
from ._tau2_records import (
    AIRPORT_CITY,
    CABIN_LABEL,
    CABIN_PRICE_RANGES,
    FREE_BAGS,
    Record,
    airline_flight,
    airline_person,
    airline_user,
    available_on,
    credit_card,
    describe_options,
    four_digits,
    near_miss_digits,
    price_with_cents,
    retail_item,
    retail_order,
    retail_user,
    unique_id,
)

BRANDS = ("visa", "mastercard")
RESERVATION_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


class ToolPrecisionKnobs(Tau2Knobs):
    """Difficulty knobs of ``trace/tool-precision-v0``."""

    model_config = ConfigDict(extra="forbid")

    variant: Literal["retail", "airline"] = Field(default="retail", description="Target domain of the tasks.")
    near_miss_methods: int = Field(
        default=2, ge=1, le=3, description="Payment methods on the profile besides the right one and the gift card."
    )
    twin_items: bool = Field(
        default=True, description="Retail: the order holds two variants of the returned product (near-miss item ids)."
    )
    payment_change_share: float = Field(
        default=0.4, ge=0.0, le=1.0, description="Retail: share of payment-change tasks (the rest are returns)."
    )
    distractor_records: int = Field(
        default=2, ge=0, le=8, description="Other orders (retail) or reservations (airline) of the same user."
    )


class ToolPrecisionEnv(Tau2VariantEnv[ToolPrecisionKnobs]):
    """The right tool and exactly the right argument values when near-miss values sit next to them."""

    capability = Capability(
        name="tool_calling_precision",
        description=(
            "Calling the right tool with exactly the right arguments when near-miss values are present: the "
            "order's own payment method rather than another one on the profile, the right item id among variants; "
            "lacking when an argument contradicts the value the agent has just read for that field."
        ),
        probe="trace_envs.analysis.probes:probe_precision",
        tau2_flaw="trace_envs.rollout.tau2_flaws:near_miss_argument",
    )
    domain: Domain[Any] = RETAIL
    max_turns = 14

    def generate(self, rng: random.Random) -> Task:
        if self.knobs.variant == "airline":
            return _build_bags(rng, self.knobs)
        if rng.random() < self.knobs.payment_change_share:
            return _build_payment_change(rng, self.knobs)
        return _build_return(rng, self.knobs)


# ----- retail -------------------------------------------------------------------------------------------------
def _products(rng: random.Random, taken: set[str]) -> dict[str, Record]:
    """Three catalog products, each with four distinct variants."""
    products = {}
    for name in rng.sample(sorted(CATALOG), 3):
        (low, high), options = CATALOG[name]
        product: Record = {"name": name, "product_id": unique_id(rng, taken, "", 10), "variants": {}}
        combos: list[dict[str, str]] = []
        while len(combos) < 4:
            combo = {k: rng.choice(v) for k, v in options.items()}
            if combo not in combos:
                combos.append(combo)
        for combo in combos:
            item_id = unique_id(rng, taken, "", 10)
            product["variants"][item_id] = {
                "item_id": item_id,
                "options": combo,
                "available": rng.random() < 0.8,
                "price": price_with_cents(rng, low, high),
            }
        products[product["product_id"]] = product
    return products


def _retail_setup(
    rng: random.Random, taken: set[str], knobs: ToolPrecisionKnobs
) -> tuple[dict[str, Record], Record, list[str]]:
    """Products, and a user whose profile holds a credit card, a gift card and near-miss methods; returns the
    products, the user, and the ids of the credit cards (first: the "right" card, then the near-miss one)."""
    products = _products(rng, taken)
    right_id = unique_id(rng, taken, "credit_card_", 7)
    digits = four_digits(rng)
    brand = rng.choice(BRANDS)
    methods: list[tuple[str, Record]] = [(right_id, credit_card(right_id, brand, digits))]
    gift_id = unique_id(rng, taken, "gift_card_", 7)
    methods.append((gift_id, {"source": "gift_card", "id": gift_id, "balance": float(rng.randint(20, 300))}))
    cards = [right_id]  # the near-miss credit card comes first among the extras: payment changes need it
    for source in ["credit_card", "paypal", "gift_card"][: knobs.near_miss_methods]:
        method_id = unique_id(rng, taken, f"{source}_", 7)
        if source == "credit_card":
            other_brand = rng.choice(BRANDS)
            methods.append((method_id, credit_card(method_id, other_brand, near_miss_digits(rng, digits))))
            cards.append(method_id)
        elif source == "paypal":
            methods.append((method_id, {"source": "paypal", "id": method_id}))
        else:
            methods.append((method_id, {"source": "gift_card", "id": method_id, "balance": float(rng.randint(0, 90))}))
    rng.shuffle(methods)
    return products, retail_user(rng, taken, dict(methods)), cards


def _orders(
    rng: random.Random, taken: set[str], knobs: ToolPrecisionKnobs, user: Record, products: dict[str, Record]
) -> dict[str, Record]:
    """The user's distractor orders (any status, any of the profile's payment methods)."""
    methods = list(user["payment_methods"])
    orders: dict[str, Record] = {}
    for _ in range(knobs.distractor_records):
        product = products[rng.choice(list(products))]
        item = retail_item(product, rng.choice(list(product["variants"])))
        status = rng.choice(("delivered", "pending", "processed"))
        order = retail_order(rng, taken, user, [item], status, rng.choice(methods))
        orders[order["order_id"]] = order
    return orders


def _build_return(rng: random.Random, knobs: ToolPrecisionKnobs) -> Task:
    """Return one of two twin items, refunded to the order's credit card (the gift card is the near miss)."""
    taken: set[str] = set()
    products, user, cards = _retail_setup(rng, taken, knobs)
    right_id = cards[0]
    gift_id = next(m for m in user["payment_methods"] if m.startswith("gift_card_"))
    product_ids = list(products)
    main = products[product_ids[0]]
    variant_ids = list(main["variants"])
    returned_id = variant_ids[0]
    returned = main["variants"][returned_id]
    items = [retail_item(main, returned_id)]
    if knobs.twin_items:
        twin_id = next(v for v in variant_ids[1:] if main["variants"][v]["options"] != returned["options"])
        items.append(retail_item(main, twin_id))
    other = products[product_ids[rng.randint(1, 2)]]
    items.append(retail_item(other, rng.choice(list(other["variants"]))))
    rng.shuffle(items)
    orders = _orders(rng, taken, knobs, user, products)
    order = retail_order(rng, taken, user, items, "delivered", right_id)
    orders[order["order_id"]] = order
    user["orders"].sort()
    order_id, options, card = (
        order["order_id"],
        describe_options(returned["options"]),
        user["payment_methods"][right_id],
    )
    solution: list[ToolCall | str] = [
        ToolCall(name="find_user_id_by_email", arguments={"email": user["email"]}),
        ToolCall(name="get_order_details", arguments={"order_id": order_id}),
        f"I'll return item {returned_id} ({main['name']}, {options}) from order {order_id}, refunded to the original "
        f"payment method, your {card['brand']} card ending in {card['last_four']} ({right_id}). Shall I proceed?",
        ToolCall(
            name="return_delivered_order_items",
            arguments={"order_id": order_id, "item_ids": [returned_id], "payment_method_id": right_id},
        ),
        f"Done: the return of item {returned_id} is requested and the refund goes to {right_id}. You will get an "
        "email with the return instructions.",
    ]
    opening = (
        f"Hi, my email is {user['email']}. I want to return the {main['name'].lower()} with {options} "
        f"from order {order_id}, just that one item. Please refund it to the original payment method."
    )
    goal = f"Return item {returned_id} of order {order_id} to the original payment method {right_id}."
    state = {"products": products, "users": {user["user_id"]: user}, "orders": orders}
    facts = _retail_facts(user, order_id)
    return _task("retail", state, goal, opening, facts, solution, ("return", 3, "payment_method_id", gift_id))


def _build_payment_change(rng: random.Random, knobs: ToolPrecisionKnobs) -> Task:
    """Switch a pending order to the card the user names (the card with swapped digits is the near miss)."""
    taken: set[str] = set()
    products, user, cards = _retail_setup(rng, taken, knobs)
    methods = user["payment_methods"]
    right_id, near_id = cards[0], cards[1]
    current_id = next(m for m in methods if m not in (right_id, near_id))
    items = []
    for product_id in rng.sample(list(products), rng.randint(1, 2)):
        product = products[product_id]
        items.append(retail_item(product, rng.choice(list(product["variants"]))))
    orders = _orders(rng, taken, knobs, user, products)
    order = retail_order(rng, taken, user, items, "pending", current_id)
    order_id, card = order["order_id"], methods[right_id]
    orders[order_id] = order
    user["orders"].sort()
    opening = (
        f"Hi, my email is {user['email']}. For my pending order {order_id}, please charge my "
        f"{card['brand']} credit card ending in {card['last_four']} instead of the current payment method."
    )
    solution: list[ToolCall | str] = [
        ToolCall(name="find_user_id_by_email", arguments={"email": user["email"]}),
        ToolCall(name="get_order_details", arguments={"order_id": order_id}),
        ToolCall(name="get_user_details", arguments={"user_id": user["user_id"]}),
        f"I'll switch the payment of order {order_id} to your {card['brand']} card ending in "
        f"{card['last_four']} ({right_id}); the current payment method gets a refund. Shall I proceed?",
        ToolCall(name="modify_pending_order_payment", arguments={"order_id": order_id, "payment_method_id": right_id}),
        f"Done: order {order_id} is now paid with {right_id}.",
    ]
    goal = f"Switch the payment of order {order_id} to {right_id}."
    state = {"products": products, "users": {user["user_id"]: user}, "orders": orders}
    facts = _retail_facts(user, order_id)
    return _task("retail", state, goal, opening, facts, solution, ("payment_change", 4, "payment_method_id", near_id))


def _retail_facts(user: Record, order_id: str) -> list[UserFact]:
    return [
        UserFact(keys=["email"], answer=f"My email is {user['email']}."),
        UserFact(keys=["order id", "order number"], answer=f"The order is {order_id}."),
    ]


# ----- airline ------------------------------------------------------------------------------------------------
def _airline_methods(rng: random.Random, taken: set[str], knobs: ToolPrecisionKnobs) -> tuple[Record, str, str]:
    """The profile's payment methods (the right card, a near-miss card, a gift card, maybe a certificate), the
    right card's id and the near-miss card's id."""
    right_id = unique_id(rng, taken, "credit_card_", 7)
    digits = four_digits(rng)
    brand = rng.choice(BRANDS)
    near_id = unique_id(rng, taken, "credit_card_", 7)
    gift_id = unique_id(rng, taken, "gift_card_", 7)
    methods: list[tuple[str, Record]] = [
        (right_id, credit_card(right_id, brand, digits)),
        (near_id, credit_card(near_id, rng.choice(BRANDS), near_miss_digits(rng, digits))),
        (gift_id, {"source": "gift_card", "id": gift_id, "amount": float(rng.randint(100, 300))}),
    ]
    if knobs.near_miss_methods >= 2:
        cert_id = unique_id(rng, taken, "certificate_", 7)
        methods.append((cert_id, {"source": "certificate", "id": cert_id, "amount": float(rng.choice((100, 250)))}))
    rng.shuffle(methods)
    return dict(methods), right_id, near_id


def _reservation(
    rng: random.Random, taken: set[str], user: Record, number: str, party: list[Record] | None, right_id: str
) -> tuple[Record, Record]:
    """One one-way reservation of ``user`` on a new flight ``number`` and that flight; ``party`` is the
    travellers (None: 1-3 random ones). It already uses all its free bags, and maybe one paid bag."""
    origin, destination = rng.sample(sorted(AIRPORT_CITY), 2)
    day = f"2024-05-{rng.randint(16, 30)}"
    cabin = rng.choice(("basic_economy", "economy", "business"))
    prices = {c: rng.randint(*CABIN_PRICE_RANGES[c]) for c in CABIN_PRICE_RANGES}
    seats = {c: rng.randint(0, 20) for c in CABIN_PRICE_RANGES}
    flight = airline_flight(number, origin, destination, rng.randint(6, 18) * 60, {day: available_on(seats, prices)})
    count = len(party) if party is not None else rng.randint(1, 3)
    people = party if party is not None else [airline_person(rng) for _ in range(count)]
    free = FREE_BAGS[user["membership"]][cabin] * count
    extra = rng.randint(0, 1)
    reservation_id = _reservation_id(rng, taken)
    return flight, {
        "reservation_id": reservation_id,
        "user_id": user["user_id"],
        "origin": origin,
        "destination": destination,
        "flight_type": "one_way",
        "cabin": cabin,
        "flights": [
            {"flight_number": number, "origin": origin, "destination": destination, "date": day, "price": prices[cabin]}
        ],
        "passengers": people,
        "payment_history": [{"payment_id": right_id, "amount": prices[cabin] * count + 50 * extra}],
        "created_at": f"2024-05-{rng.randint(1, 14):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
        "total_baggages": free + extra,
        "nonfree_baggages": extra,
        "insurance": rng.choice(("yes", "no")),
    }


def _build_bags(rng: random.Random, knobs: ToolPrecisionKnobs) -> Task:
    """Add paid bags to the user's first reservation, charged to the card the user names (near miss: the other)."""
    taken: set[str] = set(NEW_CERTIFICATE_IDS)
    methods, right_id, near_id = _airline_methods(rng, taken, knobs)
    passengers = rng.randint(1, 3)
    user = airline_user(rng, taken, methods, passengers=passengers - 1)
    flights: dict[str, Record] = {}
    reservations: dict[str, Record] = {}
    numbers = [f"HAT{n:03d}" for n in rng.sample(range(1, 1000), knobs.distractor_records + 1)]
    name = user["name"]
    travellers = [
        {"first_name": name["first_name"], "last_name": name["last_name"], "dob": user["dob"]},
        *user["saved_passengers"],
    ]
    for index, number in enumerate(numbers):
        flights[number], reservation = _reservation(
            rng, taken, user, number, travellers if index == 0 else None, right_id
        )
        reservations[reservation["reservation_id"]] = reservation
        user["reservations"].append(reservation["reservation_id"])
    target_id = next(iter(reservations))
    target = reservations[target_id]
    user["reservations"].sort()
    added = rng.randint(1, 3)
    card = user["payment_methods"][right_id]
    total_bags, paid_bags = target["total_baggages"] + added, target["nonfree_baggages"] + added
    opening = (
        f"Hi, my user id is {user['user_id']}. On reservation {target_id} I already use all our free bags; please "
        f"add {added} more checked bag{'s' if added > 1 else ''} and charge my {card['brand']} card ending in "
        f"{card['last_four']}."
    )
    bags = {"total_baggages": total_bags, "nonfree_baggages": paid_bags}
    solution: list[ToolCall | str] = [
        ToolCall(name="get_user_details", arguments={"user_id": user["user_id"]}),
        ToolCall(name="get_reservation_details", arguments={"reservation_id": target_id}),
        f"Reservation {target_id} ({CABIN_LABEL[target['cabin']]}, {len(target['passengers'])} passenger(s)) has "
        f"{target['total_baggages']} checked bags, {target['nonfree_baggages']} of them paid. Adding {added} makes "
        f"{total_bags} bags, {paid_bags} paid: ${50 * added} charged to your {card['brand']} card ending in "
        f"{card['last_four']} ({right_id}). Shall I proceed?",
        ToolCall(
            name="update_reservation_baggages",
            arguments={"reservation_id": target_id, **bags, "payment_id": right_id},
        ),
        f"Done: reservation {target_id} now has {total_bags} checked bags and ${50 * added} was charged to {right_id}.",
    ]
    facts = [
        UserFact(keys=["user id"], answer=f"My user id is {user['user_id']}."),
        UserFact(keys=["reservation id"], answer=f"It's reservation {target_id}."),
    ]
    state = {"flights": flights, "users": {user["user_id"]: user}, "reservations": reservations}
    goal = f"Add {added} paid bags to reservation {target_id}, charged to {right_id}."
    return _task("airline", state, goal, opening, facts, solution, ("bags", 3, "payment_id", near_id))


def _reservation_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        candidate = "".join(rng.choice(RESERVATION_CHARS) for _ in range(6))
        if candidate not in taken and not candidate.startswith("HATHA"):
            taken.add(candidate)
            return candidate


# ----- the task -----------------------------------------------------------------------------------------------
def _task(
    variant: str,
    state: dict[str, Any],
    goal: str,
    opening: str,
    facts: list[UserFact],
    solution: list[ToolCall | str],
    write: tuple[str, int, str, str],
) -> Task:
    """The task; ``write`` is (kind, index of the write in the solution, its argument, the near-miss value)."""
    kind, index, argument, near_miss = write
    return Task(
        task_id="",
        initial_state=state,
        goal=goal,
        user=UserScript(opening=opening, facts=facts, replies=["confirm", "close"]),
        solution=solution,
        flawed_solution=near_miss_solution(solution, index, argument, near_miss),
        metadata={"variant": variant, "kind": kind, "write_index": index, "argument": argument, "near_miss": near_miss},
    )


def near_miss_solution(solution: list[ToolCall | str], index: int, argument: str, value: str) -> list[ToolCall | str]:
    """The paper's failure: the right tool with a near-miss argument (the gift card instead of the order's card
    for returns, the similar card instead of the one the user named for payment changes and bags)."""
    write = solution[index]
    assert isinstance(write, ToolCall)
    wrong = ToolCall(name=write.name, arguments={**write.arguments, argument: value})
    return [*solution[:index], wrong, f"Done: it is charged or refunded to {value}."]
