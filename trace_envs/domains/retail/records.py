"""Small retail accounts in tau2's db.json layout, built from a task's ``rng`` for the capability envs.

Two builders: :class:`RetailRecords` (a short catalogue, customers and their orders, for the multi-step and
precondition envs) and the record functions (``retail_user``, ``retail_order`` ...) that the
structured-data and tool-precision envs compose. The layouts are the real ``RetailDB``'s (the domain
validates them on reset); catalogues come from the retail generator's ``generate_products``.
"""

from __future__ import annotations

import random
from typing import Any

from trace_envs.domains.retail.generator import CATALOG, CITIES, FIRST_NAMES, LAST_NAMES, STREETS, generate_products
from trace_envs.domains.tau2_records import (
    Record,
    credit_card,
    draw_int,
    four_digits,
    person,
    pick,
    price_with_cents,
    unique_id,
)


# ----- customers and orders of one task ------------------------------------------------------------------
class RetailRecords:
    """A small ``RetailDB`` in db.json layout: a short catalogue, customers and their orders.

    ``RetailRecords(rng, products=4)`` draws ``products`` products (2 to 4 variants each) from ``rng``; every
    id it makes is unique within the instance. Records are plain dicts in ``products``, ``users`` and
    ``orders``: change them as the task needs until the state goes to ``Plan`` (make a variant unavailable with
    ``records.products[product_id]["variants"][item_id]["available"] = False``; add one with
    ``sibling_variant``). ``state()`` returns these same dicts, not a copy, so once ``Plan(RETAIL,
    records.state())`` is made, leave them alone: a later change would alter the recorded initial state but
    not the state the reference runs on.
    """

    def __init__(self, rng: random.Random, products: int = 4):
        self.rng = rng
        self._taken: set[str] = set()
        catalog = generate_products(rng, products, (2, 4), self._taken)
        self.products: dict[str, dict[str, Any]] = {pid: p.model_dump(mode="json") for pid, p in catalog.items()}
        self.users: dict[str, dict[str, Any]] = {}
        self.orders: dict[str, dict[str, Any]] = {}

    def _digits(self, count: int) -> str:
        return str(draw_int(self.rng, 10 ** (count - 1), 10**count - 1))

    def _unique(self, prefix: str, count: int) -> str:
        while True:
            value = prefix + self._digits(count)
            if value not in self._taken:
                self._taken.add(value)
                return value

    def address(self) -> dict[str, str]:
        """A new US address: ``address1``, ``address2`` (may be ``""``), ``city``, ``country``, ``state``, ``zip``."""
        rng = self.rng
        city, state, prefix = pick(rng, CITIES)
        return {
            "address1": f"{draw_int(rng, 100, 998)} {pick(rng, STREETS)}",
            "address2": pick(rng, (f"Suite {draw_int(rng, 100, 998)}", f"Apt {draw_int(rng, 1, 98)}", "")),
            "city": city,
            "country": "USA",
            "state": state,
            "zip": prefix + self._digits(3),
        }

    def add_user(self) -> dict[str, Any]:
        """A customer with a credit card and a PayPal account, sometimes a gift card too, added to the state.

        Returns the user dict: ``user_id`` (``first_last_1234``), ``name`` (``first_name``, ``last_name``),
        ``address``, ``email`` (``first.last1234@example.com``), ``payment_methods`` (id -> method) and
        ``orders`` (order ids, filled by ``add_order``).
        """
        rng = self.rng
        first, last = pick(rng, FIRST_NAMES), pick(rng, LAST_NAMES)
        user_id = self._unique(f"{first.lower()}_{last.lower()}_", 4)
        methods: dict[str, dict[str, Any]] = {}
        card = self._unique("credit_card_", 7)
        methods[card] = {"source": "credit_card", "id": card, "brand": pick(rng, ("visa", "mastercard")),
                         "last_four": self._digits(4)}  # fmt: skip
        paypal = self._unique("paypal_", 7)
        methods[paypal] = {"source": "paypal", "id": paypal}
        if rng.random() < 0.5:
            gift = self._unique("gift_card_", 7)
            methods[gift] = {"source": "gift_card", "id": gift, "balance": round(rng.uniform(0, 250), 2)}
        user = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": self.address(),
            "email": f"{first.lower()}.{last.lower()}{self._digits(4)}@example.com",
            "payment_methods": methods,
            "orders": [],
        }
        self.users[user_id] = user
        return user

    def add_order(self, user: dict[str, Any], status: str, items: int | None = None) -> dict[str, Any]:
        """An order of ``items`` distinct products (1–3) with the given status, paid by card or PayPal.

        ``status`` is stored as given (``pending``, ``processed``, ``delivered``, ``cancelled``, ...); a
        cancelled order gets its refund, a processed or delivered one a fulfilment. Returns the order dict
        (``order_id`` such as ``#W1234567``, ``user_id``, ``address``, ``items``, ``status``,
        ``fulfillments``, ``payment_history``: one payment of the items' total) and appends its id to the
        user's ``orders``. Raises ``ValueError`` when ``items`` exceeds the catalogue's products.
        """
        rng = self.rng
        order_id = self._unique("#W", 7)
        chosen = rng.sample(sorted(self.products), items or draw_int(rng, 1, min(3, len(self.products))))
        order_items = []
        for product_id in chosen:
            product = self.products[product_id]
            variant = product["variants"][pick(rng, sorted(product["variants"]))]
            order_items.append({"name": product["name"], "product_id": product_id, "item_id": variant["item_id"],
                                "price": variant["price"], "options": dict(variant["options"])})  # fmt: skip
        method = pick(rng, sorted(m for m, v in user["payment_methods"].items() if v["source"] != "gift_card"))
        total = round(sum(item["price"] for item in order_items), 2)
        history = [{"transaction_type": "payment", "amount": total, "payment_method_id": method}]
        if status == "cancelled":
            history.append({"transaction_type": "refund", "amount": total, "payment_method_id": method})
        fulfillments = []
        if status in ("processed", "delivered"):
            fulfillments.append({"tracking_id": [self._digits(12)], "item_ids": [i["item_id"] for i in order_items]})
        order = {
            "order_id": order_id,
            "user_id": user["user_id"],
            "address": dict(user["address"]) if rng.random() < 0.85 else self.address(),
            "items": order_items,
            "status": status,
            "fulfillments": fulfillments,
            "payment_history": history,
        }
        self.orders[order_id] = order
        user["orders"].append(order_id)
        return order

    def sibling_variant(self, item: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
        """An available variant of ``item``'s product that differs in exactly one option (made if needed).

        Returns the changed option's name, its new value and the variant.
        """
        rng = self.rng
        product = self.products[item["product_id"]]
        options: dict[str, str] = item["options"]
        for variant in product["variants"].values():
            differing = [k for k in options if variant["options"].get(k) != options[k]]
            if variant["available"] and len(differing) == 1:
                return differing[0], variant["options"][differing[0]], variant
        (low, high), choices = CATALOG[product["name"]]
        key = pick(rng, sorted(options))
        value = pick(rng, [v for v in choices[key] if v != options[key]])
        new_options = {**options, key: value}
        for variant in product["variants"].values():
            if variant["options"] == new_options:  # listed but unavailable: back in stock
                variant["available"] = True
                return key, value, variant
        item_id = self._unique("", 10)
        variant = {"item_id": item_id, "options": new_options, "available": True,
                   "price": round(rng.uniform(low, high), 2)}  # fmt: skip
        product["variants"][item_id] = variant
        return key, value, variant

    def state(self) -> dict[str, Any]:
        """The db.json document (``products``, ``users``, ``orders``): pass it to ``Plan(RETAIL, ...)``."""
        return {"products": self.products, "users": self.users, "orders": self.orders}


ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")
"""The address fields the retail address-changing tools take, in their order."""


def address_arguments(address: dict[str, str]) -> dict[str, str]:
    """An address as the arguments of ``modify_pending_order_address`` / ``modify_user_address``.

    Returns the six fields ``address1``, ``address2``, ``city``, ``state``, ``country``, ``zip`` in the tools'
    order; raises ``KeyError`` when one is missing.
    """
    return {key: address[key] for key in ADDRESS_FIELDS}


def describe_address(address: dict[str, str]) -> str:
    """An address as a customer says it: ``"12 Main St, Apt 3, Austin, TX 78701, USA"`` (no ``address2``: left out)."""
    line = address["address1"] + (f", {address['address2']}" if address["address2"] else "")
    return f"{line}, {address['city']}, {address['state']} {address['zip']}, {address['country']}"


# ----- record functions ------------------------------------------------------------------------------------
def retail_address(rng: random.Random) -> Record:
    """A US address in the retail db's layout."""
    city, state, prefix = rng.choice(CITIES)
    return {
        "address1": f"{rng.randrange(100, 999)} {rng.choice(STREETS)}",
        "address2": rng.choice((f"Suite {rng.randrange(100, 999)}", f"Apt {rng.randrange(1, 99)}", "")),
        "city": city,
        "country": "USA",
        "state": state,
        "zip": prefix + str(rng.randrange(100, 1000)),
    }


def card_or_paypal(rng: random.Random, taken: set[str]) -> tuple[str, Record]:
    """A new payment method and its id: a credit card or a PayPal account, even odds."""
    method_id = unique_id(rng, taken, rng.choice(("credit_card_", "paypal_")), 7)
    if method_id.startswith("credit"):
        return method_id, credit_card(method_id, rng.choice(("visa", "mastercard")), four_digits(rng))
    return method_id, {"source": "paypal", "id": method_id}


def retail_user(rng: random.Random, taken: set[str], payment_methods: dict[str, Record]) -> Record:
    """A customer with the given payment methods and no orders yet."""
    first, last = person(rng)
    return {
        "user_id": unique_id(rng, taken, f"{first.lower()}_{last.lower()}_", 4),
        "name": {"first_name": first, "last_name": last},
        "address": retail_address(rng),
        "email": f"{first.lower()}.{last.lower()}{rng.randrange(1000, 10000)}@example.com",
        "payment_methods": payment_methods,
        "orders": [],
    }


def retail_item(product: Record, item_id: str) -> Record:
    """The order line of one variant of ``product``."""
    variant = product["variants"][item_id]
    return {
        "name": product["name"],
        "product_id": product["product_id"],
        "item_id": item_id,
        "price": variant["price"],
        "options": dict(variant["options"]),
    }


def retail_order(
    rng: random.Random, taken: set[str], user: Record, items: list[Record], status: str, payment_method_id: str
) -> Record:
    """An order of ``items`` paid in full with one method; shipped orders get a fulfillment."""
    order_id = unique_id(rng, taken, "#W", 7)
    total = round(sum(item["price"] for item in items), 2)
    history = [{"transaction_type": "payment", "amount": total, "payment_method_id": payment_method_id}]
    fulfillments = []
    if status in ("processed", "delivered"):
        tracking = str(rng.randrange(10**11, 10**12))
        fulfillments.append({"tracking_id": [tracking], "item_ids": [item["item_id"] for item in items]})
    order = {
        "order_id": order_id,
        "user_id": user["user_id"],
        "address": dict(user["address"]),
        "items": items,
        "status": status,
        "fulfillments": fulfillments,
        "payment_history": history,
    }
    user["orders"].append(order_id)
    return order


def describe_options(options: dict[str, str]) -> str:
    """``color: black, size: L`` (the user's way of naming a variant)."""
    return ", ".join(f"{key}: {value}" for key, value in options.items())


def catalog_products(rng: random.Random, taken: set[str]) -> dict[str, Record]:
    """Three catalogue products by id, each with four distinct variants (each in stock at 80%), priced with cents."""
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
            available, price = rng.random() < 0.8, price_with_cents(rng, low, high)
            product["variants"][item_id] = dict(item_id=item_id, options=combo, available=available, price=price)
        products[product["product_id"]] = product
    return products
