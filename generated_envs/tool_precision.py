"""``trace/tool-precision-v0``: the right tool with exactly the right arguments among near-miss values.

Capability: tool_calling_precision — call the right tool with exactly the argument values just read, not a near miss.
Domain: retail, variants: retail, airline — tau2's real tools and state; each profile holds near-miss payment methods.
Task kinds: return: refund one of twin items to the order's card, not the gift card; payment_change: pay a pending
order with the card the user names, not its swapped-digits twin; bags: add paid bags to a reservation, exact counts.
Knobs: variant (default retail): target domain; near_miss_methods (default 2): other payment methods on the profile;
twin_items (default True): two variants of the returned product; payment_change_share (default 0.4): retail share of
payment changes; distractor_records (default 2): the user's other orders or reservations.
Verifier: the gold state hash (the write's exact ids, bag counts and payment id); no required facts or reads.
Failure it targets: the paper's Appendix F.1, C2: the right tool with a near-miss argument (a gift card for a card).
Example: retail seed 0 returns a tablet of order #W2174477 "to the original payment method": the reference reads the
user and the order and refunds item 5926161705 to credit_card_7242134; the flawed one refunds it to gift_card_8149294.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import ConfigDict, Field

from generated_envs.probes.tool_precision import probe_precision
from trace_envs.core import Capability, Domain, Plan, Task, ToolCall, UserFact, UserScript
from trace_envs.domains import tau2_records as rec
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline import records as air
from trace_envs.domains.airline.tools import NEW_CERTIFICATE_IDS
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail import records as shop
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_flaws import near_miss_argument
from trace_envs.domains.tau2_records import Record

Records = dict[str, Record]
Facts = list[UserFact]
Write = tuple[str, int, str, str]  # kind, index of the write in the solution, its argument, the near-miss value
BRANDS = ("visa", "mastercard")


class ToolPrecisionKnobs(Tau2Knobs):
    """Difficulty knobs of ``trace/tool-precision-v0``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)  # a field's docstring: its description
    variant: Literal["retail", "airline"] = Field(default="retail", description="Target domain of the tasks.")
    near_miss_methods: int = Field(default=2, ge=1, le=3)
    """Payment methods on the profile besides the right one and the gift card."""
    twin_items: bool = True
    """Retail: the order holds two variants of the returned product (near-miss item ids)."""
    payment_change_share: float = Field(default=0.4, ge=0.0, le=1.0)
    """Retail: share of payment-change tasks (the rest are returns)."""
    distractor_records: int = Field(default=2, ge=0, le=8)
    """Other orders (retail) or reservations (airline) of the same user."""


class ToolPrecisionEnv(Tau2VariantEnv[ToolPrecisionKnobs]):
    """The right tool and exactly the right argument values when near-miss values sit next to them."""

    capability = Capability(
        name="tool_calling_precision",
        description=(
            "Calling the right tool with exactly the right arguments when near-miss values are present: the "
            "order's own payment method rather than another one on the profile, the right item id among variants; "
            "lacking when an argument contradicts the value the agent has just read for that field."
        ),
        probe=probe_precision,
        flaws={"tau2": near_miss_argument},
        hint="Take every value from the record the request is about, never from a similar entry next to it.",
    )
    domain: Domain[Any] = RETAIL
    max_turns = 14

    def generate(self, rng: random.Random) -> Task:
        if self.knobs.variant == "airline":
            return _build_bags(rng, self.knobs)
        if rng.random() < self.knobs.payment_change_share:
            return _build_payment_change(rng, self.knobs)
        return _build_return(rng, self.knobs)


def _retail_setup(rng: random.Random, knobs: ToolPrecisionKnobs) -> tuple[set[str], Records, Record, list[str]]:
    """The ids taken, products, a user holding a card, a gift card and near-miss methods, its cards (right one first)."""
    taken: set[str] = set()
    products = shop.catalog_products(rng, taken)
    right_id, digits, brand = rec.unique_id(rng, taken, "credit_card_", 7), rec.four_digits(rng), rng.choice(BRANDS)
    methods: list[tuple[str, Record]] = [(right_id, rec.credit_card(right_id, brand, digits))]
    gift_id = rec.unique_id(rng, taken, "gift_card_", 7)
    methods.append((gift_id, {"source": "gift_card", "id": gift_id, "balance": float(rng.randint(20, 300))}))
    cards = [right_id]  # the near-miss credit card comes first among the extras: payment changes need it
    for source in ["credit_card", "paypal", "gift_card"][: knobs.near_miss_methods]:
        method_id = rec.unique_id(rng, taken, f"{source}_", 7)
        if source == "credit_card":
            other_brand = rng.choice(BRANDS)
            methods.append((method_id, rec.credit_card(method_id, other_brand, rec.near_miss_digits(rng, digits))))
            cards.append(method_id)
        elif source == "paypal":
            methods.append((method_id, {"source": "paypal", "id": method_id}))
        else:
            methods.append((method_id, {"source": "gift_card", "id": method_id, "balance": float(rng.randint(0, 90))}))
    rng.shuffle(methods)
    return taken, products, shop.retail_user(rng, taken, dict(methods)), cards


def _retail_state(
    rng: random.Random, taken: set[str], knobs: ToolPrecisionKnobs, user: Record, products: Records, order: Record
) -> tuple[Record, str, Facts]:
    """The state: the user's distractor orders, then the task's ``order`` (items, status, payment method id); with the
    order's id and what the user answers (the email and the order id)."""
    methods = list(user["payment_methods"])
    orders: Records = {}
    for _ in range(knobs.distractor_records):
        product = products[rng.choice(list(products))]
        item = shop.retail_item(product, rng.choice(list(product["variants"])))
        status = rng.choice(("delivered", "pending", "processed"))
        distractor = shop.retail_order(rng, taken, user, [item], status, rng.choice(methods))
        orders[distractor["order_id"]] = distractor
    target = shop.retail_order(rng, taken, user, order["items"], order["status"], order["payment_method_id"])
    orders[target["order_id"]] = target
    user["orders"].sort()
    facts = [UserFact(keys=["email"], answer=f"My email is {user['email']}.")]
    facts.append(UserFact(keys=["order id", "order number"], answer=f"The order is {target['order_id']}."))
    return {"products": products, "users": {user["user_id"]: user}, "orders": orders}, target["order_id"], facts


def _build_return(rng: random.Random, knobs: ToolPrecisionKnobs) -> Task:
    """Return one of two twin items, refunded to the order's credit card (the gift card is the near miss)."""
    taken, products, user, cards = _retail_setup(rng, knobs)
    right_id, gift_id = cards[0], next(m for m in user["payment_methods"] if m.startswith("gift_card_"))
    main, *rest = products.values()
    returned_id, *others = main["variants"]
    returned = main["variants"][returned_id]
    items = [shop.retail_item(main, returned_id)]
    if knobs.twin_items:
        twin_id = next(v for v in others if main["variants"][v]["options"] != returned["options"])
        items.append(shop.retail_item(main, twin_id))
    other = rest[rng.randint(1, 2) - 1]
    items.append(shop.retail_item(other, rng.choice(list(other["variants"]))))
    rng.shuffle(items)
    order = {"items": items, "status": "delivered", "payment_method_id": right_id}
    state, order_id, facts = _retail_state(rng, taken, knobs, user, products, order)
    card = user["payment_methods"][right_id]
    plan = Plan(RETAIL, state)
    plan.call("find_user_id_by_email", email=user["email"])
    listed = plan.call("get_order_details", order_id=order_id)  # the item the user describes, the order's method
    item = next(i for i in listed.items if i.product_id == main["product_id"] and i.options == returned["options"])
    paid_with = listed.payment_history[0].payment_method_id
    plan.confirm(
        f"I'll return item {item.item_id} ({item.name}, {shop.describe_options(item.options)}) from order {order_id}, "
        f"refunded to the original payment method, your {card['brand']} card ending in {card['last_four']} "
        f"({paid_with}). Shall I proceed?"
    )  # the card's brand and digits are the user's own words: the reference reads no payment method details
    plan.call("return_delivered_order_items", order_id=order_id, item_ids=[item.item_id], payment_method_id=paid_with)
    plan.say(
        f"Done: the return of item {item.item_id} is requested and the refund goes to {paid_with}. You will get an "
        "email with the return instructions."
    )
    opening = (
        f"Hi, my email is {user['email']}. I want to return the {main['name'].lower()} with "
        f"{shop.describe_options(returned['options'])} "
        f"from order {order_id}, just that one item. Please refund it to the original payment method."
    )
    goal = f"Return item {returned_id} of order {order_id} to the original payment method {right_id}."
    return _task(plan, "retail", goal, opening, facts, ("return", 3, "payment_method_id", gift_id))


def _build_payment_change(rng: random.Random, knobs: ToolPrecisionKnobs) -> Task:
    """Switch a pending order to the card the user names (the card with swapped digits is the near miss)."""
    taken, products, user, cards = _retail_setup(rng, knobs)
    methods = user["payment_methods"]
    right_id, near_id = cards[0], cards[1]
    current_id = next(m for m in methods if m not in (right_id, near_id))
    chosen = [products[product_id] for product_id in rng.sample(list(products), rng.randint(1, 2))]
    items = [shop.retail_item(product, rng.choice(list(product["variants"]))) for product in chosen]
    order = {"items": items, "status": "pending", "payment_method_id": current_id}
    state, order_id, facts = _retail_state(rng, taken, knobs, user, products, order)
    card = methods[right_id]
    opening = (
        f"Hi, my email is {user['email']}. For my pending order {order_id}, please charge my "
        f"{card['brand']} credit card ending in {card['last_four']} instead of the current payment method."
    )
    plan = Plan(RETAIL, state)
    user_id = plan.call("find_user_id_by_email", email=user["email"])
    plan.call("get_order_details", order_id=order_id)
    named = rec.named_card(plan.call("get_user_details", user_id=user_id).payment_methods, card)
    plan.confirm(
        f"I'll switch the payment of order {order_id} to your {card['brand']} card ending in "
        f"{card['last_four']} ({named}); the current payment method gets a refund. Shall I proceed?"
    )
    plan.call("modify_pending_order_payment", order_id=order_id, payment_method_id=named)
    plan.say(f"Done: order {order_id} is now paid with {named}.")
    goal = f"Switch the payment of order {order_id} to {right_id}."
    return _task(plan, "retail", goal, opening, facts, ("payment_change", 4, "payment_method_id", near_id))


def _build_bags(rng: random.Random, knobs: ToolPrecisionKnobs) -> Task:
    """Add paid bags to the user's first reservation, charged to the card the user names (near miss: the other)."""
    taken: set[str] = set(NEW_CERTIFICATE_IDS)
    right_id, digits, brand = rec.unique_id(rng, taken, "credit_card_", 7), rec.four_digits(rng), rng.choice(BRANDS)
    near_id, gift_id = rec.unique_id(rng, taken, "credit_card_", 7), rec.unique_id(rng, taken, "gift_card_", 7)
    methods: list[tuple[str, Record]] = [
        (right_id, rec.credit_card(right_id, brand, digits)),
        (near_id, rec.credit_card(near_id, rng.choice(BRANDS), rec.near_miss_digits(rng, digits))),
        (gift_id, {"source": "gift_card", "id": gift_id, "amount": float(rng.randint(100, 300))}),
    ]
    if knobs.near_miss_methods >= 2:
        cert_id = rec.unique_id(rng, taken, "certificate_", 7)
        methods.append((cert_id, {"source": "certificate", "id": cert_id, "amount": float(rng.choice((100, 250)))}))
    rng.shuffle(methods)
    user = air.airline_user(rng, taken, dict(methods), passengers=rng.randint(1, 3) - 1)
    flights, reservations = {}, {}
    numbers = [f"HAT{n:03d}" for n in rng.sample(range(1, 1000), knobs.distractor_records + 1)]
    me = {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}
    for index, number in enumerate(numbers):
        party = [me, *user["saved_passengers"]] if index == 0 else None
        flights[number], reservation = air.one_way_reservation(rng, taken, user, number, party, right_id)
        reservations[reservation["reservation_id"]] = reservation
        user["reservations"].append(reservation["reservation_id"])
    target_id = next(iter(reservations))
    user["reservations"].sort()
    added, card = rng.randint(1, 3), user["payment_methods"][right_id]
    opening = (
        f"Hi, my user id is {user['user_id']}. On reservation {target_id} I already use all our free bags; please "
        f"add {added} more checked bag{'s' if added > 1 else ''} and charge my {card['brand']} card ending in "
        f"{card['last_four']}."
    )
    state = {"flights": flights, "users": {user["user_id"]: user}, "reservations": reservations}
    plan = Plan(AIRLINE, state)  # the card the user names and the bag counts, as the tools list them
    named = rec.named_card(plan.call("get_user_details", user_id=user["user_id"]).payment_methods, card)
    booked = plan.call("get_reservation_details", reservation_id=target_id)
    total_bags, paid_bags = booked.total_baggages + added, booked.nonfree_baggages + added
    plan.confirm(
        f"Reservation {target_id} ({air.CABIN_LABEL[booked.cabin]}, {len(booked.passengers)} passenger(s)) "
        f"has {booked.total_baggages} checked bags, {booked.nonfree_baggages} of them paid. Adding {added} "
        f"makes {total_bags} bags, {paid_bags} paid: ${50 * added} charged to your {card['brand']} card ending in "
        f"{card['last_four']} ({named}). Shall I proceed?"
    )
    bags = {"reservation_id": target_id, "total_baggages": total_bags, "nonfree_baggages": paid_bags}
    plan.call("update_reservation_baggages", **bags, payment_id=named)
    plan.say(
        f"Done: reservation {target_id} now has {total_bags} checked bags and ${50 * added} was charged to {named}."
    )
    facts = [UserFact(keys=["user id"], answer=f"My user id is {user['user_id']}.")]
    facts.append(UserFact(keys=["reservation id"], answer=f"It's reservation {target_id}."))
    goal = f"Add {added} paid bags to reservation {target_id}, charged to {right_id}."
    return _task(plan, "airline", goal, opening, facts, ("bags", 3, "payment_id", near_id))


def _task(plan: Plan, variant: str, goal: str, opening: str, facts: Facts, write: Write) -> Task:
    """The task; its flawed solution is the paper's failure: the right tool with a near-miss argument (the gift card
    instead of the order's card for returns, the similar card instead of the one the user named elsewhere)."""
    kind, index, argument, near_miss = write
    call = plan.steps[index]
    assert isinstance(call, ToolCall)
    wrong = ToolCall(name=call.name, arguments={**call.arguments, argument: near_miss})
    return plan.task(
        goal=goal, user=UserScript(opening=opening, facts=facts),
        flawed_solution=[*plan.steps[:index], wrong, f"Done: it is charged or refunded to {near_miss}."],
        metadata={"variant": variant, "kind": kind, "write_index": index, "argument": argument, "near_miss": near_miss},
    )  # fmt: skip
