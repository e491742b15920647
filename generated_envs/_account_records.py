"""Small per-task airline and retail accounts for the multi-step and precondition envs.

Each task needs only a handful of records (one customer, a few reservations or orders, the flights or
products they reference), built as db.json-layout dicts straight from the env's ``rng`` so that a
reset stays well under a millisecond. The layouts are those of the real ``FlightDB`` / ``RetailDB``
(the env validates them into those models on reset); product catalogues come from the retail
generator's ``generate_products``.
"""

from __future__ import annotations

import random
import string
from datetime import datetime, timedelta
from typing import Any

from trace_envs.domains.airline.generator import CABIN_PRICE_RANGES, CITIES, FIRST_NAMES, LAST_NAMES, STREETS
from trace_envs.domains.airline.tools import AIRPORTS, NEW_CERTIFICATE_IDS, NEW_RESERVATION_IDS
from trace_envs.domains.retail.generator import CATALOG, generate_products
from trace_envs.domains.retail.generator import CITIES as RETAIL_CITIES
from trace_envs.domains.retail.generator import FIRST_NAMES as RETAIL_FIRST_NAMES
from trace_envs.domains.retail.generator import LAST_NAMES as RETAIL_LAST_NAMES
from trace_envs.domains.retail.generator import STREETS as RETAIL_STREETS

AIRLINE_NOW = datetime(2024, 5, 15, 15, 0, 0)
"""The airline policy's "now" (2024-05-15 15:00 EST): every eligibility decision is relative to it."""

FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
"""Free checked bags per passenger by membership tier and cabin (the airline policy's table)."""

CABINS = ("basic_economy", "economy", "business")


ID_ALPHABET = string.ascii_uppercase + string.digits


def _int(rng: random.Random, low: int, high: int) -> int:
    """A uniform integer in [low, high] from one ``rng.random()`` (several times cheaper than ``randint``)."""
    return low + int(rng.random() * (high - low + 1))


def _code(rng: random.Random) -> str:
    """A six-character reservation code (upper-case letters and digits) from one draw."""
    number = int(rng.random() * 36**6)
    return "".join(ID_ALPHABET[(number // 36**i) % 36] for i in range(6))


def _pick(rng: random.Random, options: Any) -> Any:
    return options[int(rng.random() * len(options))]


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def money(amount: float) -> str:
    """An amount as the oracle says it: whole dollars without decimals, cents with two."""
    return f"${amount:.0f}" if float(amount).is_integer() else f"${amount:.2f}"


# ----- airline -------------------------------------------------------------------------------------------
class AirlineRecords:
    """A small ``FlightDB`` in db.json layout: users, their reservations and only the flights they use."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.flights: dict[str, dict[str, Any]] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.reservations: dict[str, dict[str, Any]] = {}
        self._taken: set[str] = {*NEW_RESERVATION_IDS, *NEW_CERTIFICATE_IDS}

    def _unique(self, make: Any) -> str:
        while True:
            value: str = make()
            if value not in self._taken:
                self._taken.add(value)
                return value

    def person(self) -> dict[str, str]:
        rng = self.rng
        dob = datetime(1950, 1, 1) + timedelta(days=_int(rng, 0, 365 * 55 - 1))
        return {
            "first_name": _pick(rng, FIRST_NAMES),
            "last_name": _pick(rng, LAST_NAMES),
            "dob": dob.date().isoformat(),
        }

    def add_user(self, membership: str | None = None) -> dict[str, Any]:
        """A customer with one credit card, maybe a gift card and a certificate, and saved passengers."""
        rng = self.rng
        first, last = _pick(rng, FIRST_NAMES), _pick(rng, LAST_NAMES)
        user_id = self._unique(lambda: f"{first.lower()}_{last.lower()}_{_int(rng, 1000, 9999)}")
        card = self._unique(lambda: f"credit_card_{_int(rng, 1_000_000, 9_999_999)}")
        methods: dict[str, dict[str, Any]] = {
            card: {"source": "credit_card", "id": card, "brand": _pick(rng, ("visa", "mastercard")),
                   "last_four": f"{_int(rng, 0, 9999):04d}"},
        }  # fmt: skip
        if rng.random() < 0.6:
            gift = self._unique(lambda: f"gift_card_{_int(rng, 1_000_000, 9_999_999)}")
            methods[gift] = {"source": "gift_card", "id": gift, "amount": float(_int(rng, 0, 300))}
        if rng.random() < 0.4:
            cert = self._unique(lambda: f"certificate_{_int(rng, 1_000_000, 9_999_999)}")
            methods[cert] = {"source": "certificate", "id": cert, "amount": _pick(rng, (100.0, 150.0, 250.0))}
        city, state, zip_prefix = _pick(rng, CITIES)
        user = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": {"address1": f"{_int(rng, 100, 999)} {_pick(rng, STREETS)}",
                        "address2": f"Suite {_int(rng, 100, 999)}", "city": city, "country": "USA", "state": state,
                        "zip": f"{zip_prefix}{_int(rng, 0, 99):02d}"},
            "email": f"{first.lower()}.{last.lower()}{_int(rng, 1000, 9999)}@example.com",
            "dob": self.person()["dob"],
            "payment_methods": methods,
            "saved_passengers": [self.person() for _ in range(_pick(rng, (0, 1, 1, 2)))],
            "membership": membership or _pick(rng, ("regular", "silver", "gold")),
            "reservations": [],
        }  # fmt: skip
        self.users[user_id] = user
        return user

    @staticmethod
    def credit_card(user: dict[str, Any]) -> str:
        methods: dict[str, dict[str, Any]] = user["payment_methods"]
        return next(m for m, v in methods.items() if v["source"] == "credit_card")

    def _flight(self, origin: str, destination: str) -> str:
        rng = self.rng
        number = self._unique(lambda: f"HAT{_int(rng, 1, 299):03d}")
        hour = _int(rng, 5, 18)
        self.flights[number] = {
            "flight_number": number,
            "origin": origin,
            "destination": destination,
            "scheduled_departure_time_est": f"{hour:02d}:00:00",
            "scheduled_arrival_time_est": f"{hour + _int(rng, 1, 5):02d}:00:00",
            "dates": {},
        }
        return number

    def add_reservation(
        self,
        user: dict[str, Any],
        *,
        cabin: str,
        created_at: datetime,
        insurance: str,
        cancelled_segment: bool = False,
        passengers: int | None = None,
    ) -> dict[str, Any]:
        """A future trip (one way or round trip, every date after today) paid in full by the credit card.

        ``cancelled_segment`` marks one of its flight dates as cancelled by the airline. Checked bags stay
        within the free allowance (no paid bags).
        """
        rng = self.rng
        origin, destination = rng.sample([code for code, _ in AIRPORTS], 2)
        round_trip = rng.random() < 0.5
        out_day = AIRLINE_NOW.date() + timedelta(days=_int(rng, 2, 12))
        legs = [(self._flight(origin, destination), out_day)]
        if round_trip:
            legs.append((self._flight(destination, origin), out_day + timedelta(days=_int(rng, 1, 6))))
        count = passengers or _pick(rng, (1, 1, 2, 2, 3))
        people = [
            {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}
        ]
        people += [dict(p) for p in user["saved_passengers"]]
        while len(people) < count:
            people.append(self.person())
        people = people[:count]
        segments = []
        for number, day in legs:
            prices = {c: _int(rng, *CABIN_PRICE_RANGES[c]) for c in CABINS}
            self.flights[number]["dates"][day.isoformat()] = {
                "status": "available",
                "available_seats": {c: _int(rng, 2, 20) for c in CABINS},
                "prices": prices,
            }
            flight = self.flights[number]
            segments.append({"flight_number": number, "origin": flight["origin"], "destination": flight["destination"],
                             "date": day.isoformat(), "price": prices[cabin]})  # fmt: skip
        if cancelled_segment:
            number, day = _pick(rng, legs)
            self.flights[number]["dates"][day.isoformat()] = {"status": "cancelled"}
        total = sum(s["price"] for s in segments) * count + (30 * count if insurance == "yes" else 0)
        free = FREE_BAGS[user["membership"]][cabin] * count
        reservation_id = self._unique(lambda: _code(rng))
        reservation = {
            "reservation_id": reservation_id,
            "user_id": user["user_id"],
            "origin": origin,
            "destination": destination,
            "flight_type": "round_trip" if round_trip else "one_way",
            "cabin": cabin,
            "flights": segments,
            "passengers": people,
            "payment_history": [{"payment_id": self.credit_card(user), "amount": total}],
            "created_at": stamp(created_at),
            "total_baggages": min(free, _int(rng, 0, count)),
            "nonfree_baggages": 0,
            "insurance": insurance,
        }
        self.reservations[reservation_id] = reservation
        user["reservations"].append(reservation_id)
        return reservation

    def state(self) -> dict[str, Any]:
        return {"flights": self.flights, "users": self.users, "reservations": self.reservations}


def refund_total(reservation: dict[str, Any]) -> int:
    """What ``cancel_reservation`` refunds: every payment of the reservation."""
    return int(sum(p["amount"] for p in reservation["payment_history"]))


# ----- retail --------------------------------------------------------------------------------------------
class RetailRecords:
    """A small ``RetailDB`` in db.json layout: a short catalogue, customers and their orders."""

    def __init__(self, rng: random.Random, products: int = 4):
        self.rng = rng
        self._taken: set[str] = set()
        catalog = generate_products(rng, products, (2, 4), self._taken)
        self.products: dict[str, dict[str, Any]] = {pid: p.model_dump(mode="json") for pid, p in catalog.items()}
        self.users: dict[str, dict[str, Any]] = {}
        self.orders: dict[str, dict[str, Any]] = {}

    def _digits(self, count: int) -> str:
        return str(_int(self.rng, 10 ** (count - 1), 10**count - 1))

    def _unique(self, prefix: str, count: int) -> str:
        while True:
            value = prefix + self._digits(count)
            if value not in self._taken:
                self._taken.add(value)
                return value

    def address(self) -> dict[str, str]:
        rng = self.rng
        city, state, prefix = _pick(rng, RETAIL_CITIES)
        return {
            "address1": f"{_int(rng, 100, 998)} {_pick(rng, RETAIL_STREETS)}",
            "address2": _pick(rng, (f"Suite {_int(rng, 100, 998)}", f"Apt {_int(rng, 1, 98)}", "")),
            "city": city,
            "country": "USA",
            "state": state,
            "zip": prefix + self._digits(3),
        }

    def add_user(self) -> dict[str, Any]:
        """A customer with a credit card and a PayPal account, sometimes a gift card too."""
        rng = self.rng
        first, last = _pick(rng, RETAIL_FIRST_NAMES), _pick(rng, RETAIL_LAST_NAMES)
        user_id = self._unique(f"{first.lower()}_{last.lower()}_", 4)
        methods: dict[str, dict[str, Any]] = {}
        card = self._unique("credit_card_", 7)
        methods[card] = {"source": "credit_card", "id": card, "brand": _pick(rng, ("visa", "mastercard")),
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
        """An order of ``items`` distinct products (1–3) with the given status, paid by card or PayPal."""
        rng = self.rng
        order_id = self._unique("#W", 7)
        chosen = rng.sample(sorted(self.products), items or _int(rng, 1, min(3, len(self.products))))
        order_items = []
        for product_id in chosen:
            product = self.products[product_id]
            variant = product["variants"][_pick(rng, sorted(product["variants"]))]
            order_items.append({"name": product["name"], "product_id": product_id, "item_id": variant["item_id"],
                                "price": variant["price"], "options": dict(variant["options"])})  # fmt: skip
        method = _pick(rng, sorted(m for m, v in user["payment_methods"].items() if v["source"] != "gift_card"))
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
        key = _pick(rng, sorted(options))
        value = _pick(rng, [v for v in choices[key] if v != options[key]])
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
        return {"products": self.products, "users": self.users, "orders": self.orders}


def describe_address(address: dict[str, str]) -> str:
    """An address as a customer says it."""
    line = address["address1"] + (f", {address['address2']}" if address["address2"] else "")
    return f"{line}, {address['city']}, {address['state']} {address['zip']}, {address['country']}"
