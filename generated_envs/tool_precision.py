"""``trace/tool-precision-v0``: the right tool with exactly the right arguments among near-miss values.

Retail variant, two kinds of task:

* return: refund a returned item to the order's *original* payment method. The profile also holds a
  gift card (which ``return_delivered_order_items`` accepts too) and other near-miss methods, and the
  order holds twin items (two variants of the same product), so the item id must be the one the
  user describes.
* payment change: switch a pending order to the card the user names ("my visa ending in 4821") when
  the profile also holds a card ending in 4812.

Airline variant: add checked bags to a reservation and charge the card the user names, with a
near-miss card (other brand, swapped digits), a gift card and a certificate on the profile; the
total and paid bag counts must be exact.

The paper's failure (Appendix F.1, C2) that ``flawed_actions()`` plays: the right tool, a near-miss
argument: the gift card instead of the order's credit card (retail return), the near-miss card
elsewhere.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import ConfigDict, Field

from trace_envs.core import Capability, Domain, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline.records import (
    AIRPORT_CITY,
    CABIN_LABEL,
    CABIN_PRICE_RANGES,
    FREE_BAGS,
    airline_flight,
    airline_person,
    airline_user,
    available_on,
    credit_card,
)
from trace_envs.domains.airline.tools import NEW_CERTIFICATE_IDS
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail.generator import CATALOG
from trace_envs.domains.retail.records import (
    describe_options,
    retail_item,
    retail_order,
    retail_user,
)
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_records import (
    Record,
    four_digits,
    near_miss_digits,
    price_with_cents,
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
            return self._bags_task(rng)
        if rng.random() < self.knobs.payment_change_share:
            return self._payment_change_task(rng)
        return self._return_task(rng)

    # ----- retail -------------------------------------------------------------------------------------------
    def _retail_setup(self, rng: random.Random, taken: set[str]) -> tuple[dict[str, Record], Record, list[str]]:
        """Products, and a user whose profile holds a credit card, a gift card and near-miss methods.

        Returns the products, the user, and the ids of the credit cards (first: the "right" card).
        """
        names = rng.sample(sorted(CATALOG), 3)
        products = {}
        for name in names:
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
        right_id = unique_id(rng, taken, "credit_card_", 7)
        digits = four_digits(rng)
        brand = rng.choice(BRANDS)
        methods: list[tuple[str, Record]] = [(right_id, credit_card(right_id, brand, digits))]
        gift_id = unique_id(rng, taken, "gift_card_", 7)
        methods.append((gift_id, {"source": "gift_card", "id": gift_id, "balance": float(rng.randint(20, 300))}))
        cards = [right_id]  # the near-miss credit card comes first among the extras: payment changes need it
        extras = ["credit_card", "paypal", "gift_card"][: self.knobs.near_miss_methods]
        for source in extras:
            method_id = unique_id(rng, taken, f"{source}_", 7)
            if source == "credit_card":
                other_brand = rng.choice(BRANDS)
                methods.append((method_id, credit_card(method_id, other_brand, near_miss_digits(rng, digits))))
                cards.append(method_id)
            elif source == "paypal":
                methods.append((method_id, {"source": "paypal", "id": method_id}))
            else:
                methods.append(
                    (method_id, {"source": "gift_card", "id": method_id, "balance": float(rng.randint(0, 90))})
                )
        rng.shuffle(methods)
        user = retail_user(rng, taken, dict(methods))
        return products, user, cards

    def _distractor_orders(
        self, rng: random.Random, taken: set[str], user: Record, products: dict[str, Record], orders: dict[str, Record]
    ) -> None:
        methods = list(user["payment_methods"])
        for _ in range(self.knobs.distractor_records):
            product = products[rng.choice(list(products))]
            item = retail_item(product, rng.choice(list(product["variants"])))
            status = rng.choice(("delivered", "pending", "processed"))
            order = retail_order(rng, taken, user, [item], status, rng.choice(methods))
            orders[order["order_id"]] = order

    def _return_task(self, rng: random.Random) -> Task:
        taken: set[str] = set()
        products, user, cards = self._retail_setup(rng, taken)
        right_id = cards[0]
        gift_id = next(m for m in user["payment_methods"] if m.startswith("gift_card_"))
        product_ids = list(products)
        main = products[product_ids[0]]
        variant_ids = list(main["variants"])
        returned_id = variant_ids[0]
        items = [retail_item(main, returned_id)]
        if self.knobs.twin_items:
            twin_id = next(
                v for v in variant_ids[1:] if main["variants"][v]["options"] != main["variants"][returned_id]["options"]
            )
            items.append(retail_item(main, twin_id))
        other = products[product_ids[rng.randint(1, 2)]]
        items.append(retail_item(other, rng.choice(list(other["variants"]))))
        rng.shuffle(items)
        orders: dict[str, Record] = {}
        self._distractor_orders(rng, taken, user, products, orders)
        order = retail_order(rng, taken, user, items, "delivered", right_id)
        orders[order["order_id"]] = order
        user["orders"].sort()
        returned = main["variants"][returned_id]
        noun = main["name"].lower()
        card = user["payment_methods"][right_id]
        opening = (
            f"Hi, my email is {user['email']}. I want to return the {noun} with {describe_options(returned['options'])} "
            f"from order {order['order_id']}, just that one item. Please refund it to the original payment method."
        )
        write = ToolCall(
            name="return_delivered_order_items",
            arguments={"order_id": order["order_id"], "item_ids": [returned_id], "payment_method_id": right_id},
        )
        solution: list[ToolCall | str] = [
            ToolCall(name="find_user_id_by_email", arguments={"email": user["email"]}),
            ToolCall(name="get_order_details", arguments={"order_id": order["order_id"]}),
            f"I'll return item {returned_id} ({main['name']}, {describe_options(returned['options'])}) from order "
            f"{order['order_id']}, refunded to the original payment method, your {card['brand']} card ending in "
            f"{card['last_four']} ({right_id}). Shall I proceed?",
            write,
            f"Done: the return of item {returned_id} is requested and the refund goes to {right_id}. You will get an "
            "email with the return instructions.",
        ]
        return self._retail_task(
            user,
            products,
            orders,
            opening,
            solution,
            goal=f"Return item {returned_id} of order {order['order_id']} to the original payment method {right_id}.",
            metadata={"kind": "return", "write_index": 3, "argument": "payment_method_id", "near_miss": gift_id},
        )

    def _payment_change_task(self, rng: random.Random) -> Task:
        taken: set[str] = set()
        products, user, cards = self._retail_setup(rng, taken)
        methods = user["payment_methods"]
        right_id, near_id = cards[0], cards[1]
        current_id = next(m for m in methods if m not in (right_id, near_id))
        product_ids = list(products)
        items = []
        for product_id in rng.sample(product_ids, rng.randint(1, 2)):
            product = products[product_id]
            items.append(retail_item(product, rng.choice(list(product["variants"]))))
        orders: dict[str, Record] = {}
        self._distractor_orders(rng, taken, user, products, orders)
        order = retail_order(rng, taken, user, items, "pending", current_id)
        orders[order["order_id"]] = order
        user["orders"].sort()
        card = methods[right_id]
        opening = (
            f"Hi, my email is {user['email']}. For my pending order {order['order_id']}, please charge my "
            f"{card['brand']} credit card ending in {card['last_four']} instead of the current payment method."
        )
        write = ToolCall(
            name="modify_pending_order_payment",
            arguments={"order_id": order["order_id"], "payment_method_id": right_id},
        )
        solution: list[ToolCall | str] = [
            ToolCall(name="find_user_id_by_email", arguments={"email": user["email"]}),
            ToolCall(name="get_order_details", arguments={"order_id": order["order_id"]}),
            ToolCall(name="get_user_details", arguments={"user_id": user["user_id"]}),
            f"I'll switch the payment of order {order['order_id']} to your {card['brand']} card ending in "
            f"{card['last_four']} ({right_id}); the current payment method gets a refund. Shall I proceed?",
            write,
            f"Done: order {order['order_id']} is now paid with {right_id}.",
        ]
        return self._retail_task(
            user,
            products,
            orders,
            opening,
            solution,
            goal=f"Switch the payment of order {order['order_id']} to {right_id}.",
            metadata={
                "kind": "payment_change",
                "write_index": 4,
                "argument": "payment_method_id",
                "near_miss": near_id,
            },
        )

    @staticmethod
    def _retail_task(
        user: Record,
        products: dict[str, Record],
        orders: dict[str, Record],
        opening: str,
        solution: list[ToolCall | str],
        goal: str,
        metadata: dict[str, Any],
    ) -> Task:
        write = solution[metadata["write_index"]]
        assert isinstance(write, ToolCall)
        order_id = write.arguments["order_id"]
        return Task(
            task_id="",
            initial_state={"products": products, "users": {user["user_id"]: user}, "orders": orders},
            goal=goal,
            user=UserScript(
                opening=opening,
                facts=[
                    UserFact(keys=["email"], answer=f"My email is {user['email']}."),
                    UserFact(keys=["order id", "order number"], answer=f"The order is {order_id}."),
                ],
                replies=["confirm", "close"],
            ),
            solution=solution,
            flawed_solution=near_miss_solution(
                solution, metadata["write_index"], metadata["argument"], metadata["near_miss"]
            ),
            metadata={"variant": "retail", **metadata},
        )

    # ----- airline ------------------------------------------------------------------------------------------
    def _bags_task(self, rng: random.Random) -> Task:
        taken: set[str] = set(NEW_CERTIFICATE_IDS)
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
        if self.knobs.near_miss_methods >= 2:
            cert_id = unique_id(rng, taken, "certificate_", 7)
            methods.append((cert_id, {"source": "certificate", "id": cert_id, "amount": float(rng.choice((100, 250)))}))
        rng.shuffle(methods)
        passengers = rng.randint(1, 3)
        user = airline_user(rng, taken, dict(methods), passengers=passengers - 1)
        codes = sorted(AIRPORT_CITY)
        flights: dict[str, Record] = {}
        reservations: dict[str, Record] = {}
        numbers = [f"HAT{n:03d}" for n in rng.sample(range(1, 1000), self.knobs.distractor_records + 1)]
        travellers = [
            {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]},
            *user["saved_passengers"],
        ]
        for index in range(self.knobs.distractor_records + 1):
            origin, destination = rng.sample(codes, 2)
            day = f"2024-05-{rng.randint(16, 30)}"
            cabin = rng.choice(("basic_economy", "economy", "business"))
            prices = {c: rng.randint(*CABIN_PRICE_RANGES[c]) for c in CABIN_PRICE_RANGES}
            seats = {c: rng.randint(0, 20) for c in CABIN_PRICE_RANGES}
            number = numbers[index]
            flights[number] = airline_flight(
                number, origin, destination, rng.randint(6, 18) * 60, {day: available_on(seats, prices)}
            )
            count = passengers if index == 0 else rng.randint(1, 3)
            people = travellers if index == 0 else [airline_person(rng) for _ in range(count)]
            free = FREE_BAGS[user["membership"]][cabin] * count
            extra = rng.randint(0, 1)
            reservation_id = self._reservation_id(rng, taken)
            reservations[reservation_id] = {
                "reservation_id": reservation_id,
                "user_id": user["user_id"],
                "origin": origin,
                "destination": destination,
                "flight_type": "one_way",
                "cabin": cabin,
                "flights": [
                    {
                        "flight_number": number,
                        "origin": origin,
                        "destination": destination,
                        "date": day,
                        "price": prices[cabin],
                    }
                ],
                "passengers": people,
                "payment_history": [{"payment_id": right_id, "amount": prices[cabin] * count + 50 * extra}],
                "created_at": f"2024-05-{rng.randint(1, 14):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
                "total_baggages": free + extra,
                "nonfree_baggages": extra,
                "insurance": rng.choice(("yes", "no")),
            }
            user["reservations"].append(reservation_id)
        target_id = next(iter(reservations))
        target = reservations[target_id]
        user["reservations"].sort()
        added = rng.randint(1, 3)
        card = user["payment_methods"][right_id]
        total_bags = target["total_baggages"] + added
        paid_bags = target["nonfree_baggages"] + added
        opening = (
            f"Hi, my user id is {user['user_id']}. On reservation {target_id} I already use all our free bags; please "
            f"add {added} more checked bag{'s' if added > 1 else ''} and charge my {card['brand']} card ending in "
            f"{card['last_four']}."
        )
        write = ToolCall(
            name="update_reservation_baggages",
            arguments={
                "reservation_id": target_id,
                "total_baggages": total_bags,
                "nonfree_baggages": paid_bags,
                "payment_id": right_id,
            },
        )
        solution: list[ToolCall | str] = [
            ToolCall(name="get_user_details", arguments={"user_id": user["user_id"]}),
            ToolCall(name="get_reservation_details", arguments={"reservation_id": target_id}),
            f"Reservation {target_id} ({CABIN_LABEL[target['cabin']]}, {len(target['passengers'])} passenger(s)) has "
            f"{target['total_baggages']} checked bags, {target['nonfree_baggages']} of them paid. Adding {added} makes "
            f"{total_bags} bags, {paid_bags} paid: ${50 * added} charged to your {card['brand']} card ending in "
            f"{card['last_four']} ({right_id}). Shall I proceed?",
            write,
            f"Done: reservation {target_id} now has {total_bags} checked bags and ${50 * added} was charged to {right_id}.",
        ]
        return Task(
            task_id="",
            initial_state={"flights": flights, "users": {user["user_id"]: user}, "reservations": reservations},
            goal=f"Add {added} paid bags to reservation {target_id}, charged to {right_id}.",
            user=UserScript(
                opening=opening,
                facts=[
                    UserFact(keys=["user id"], answer=f"My user id is {user['user_id']}."),
                    UserFact(keys=["reservation id"], answer=f"It's reservation {target_id}."),
                ],
                replies=["confirm", "close"],
            ),
            solution=solution,
            flawed_solution=near_miss_solution(solution, 3, "payment_id", near_id),
            metadata={
                "variant": "airline",
                "kind": "bags",
                "write_index": 3,
                "argument": "payment_id",
                "near_miss": near_id,
            },
        )

    @staticmethod
    def _reservation_id(rng: random.Random, taken: set[str]) -> str:
        while True:
            candidate = "".join(rng.choice(RESERVATION_CHARS) for _ in range(6))
            if candidate not in taken and not candidate.startswith("HATHA"):
                taken.add(candidate)
                return candidate


def near_miss_solution(solution: list[ToolCall | str], index: int, argument: str, value: str) -> list[ToolCall | str]:
    """The paper's failure: the right tool with a near-miss argument (the gift card instead of the order's card
    for returns, the similar card instead of the one the user named for payment changes and bags)."""
    write = solution[index]
    assert isinstance(write, ToolCall)
    wrong = ToolCall(name=write.name, arguments={**write.arguments, argument: value})
    return [*solution[:index], wrong, f"Done: it is charged or refunded to {value}."]
