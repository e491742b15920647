"""Seeded generator of realistic retail databases (tau2 retail layout) for capability envs and tests.

``generate_retail_db(random.Random(seed), users=..., products=...)`` uses only the given ``rng``, so
the same seed gives the same database (and canonical hash) in any process. Ids follow the
benchmark's shapes: 10-digit product and item ids, ``#W`` + 7-digit order ids,
``first_last_NNNN`` user ids, ``credit_card_NNNNNNN`` / ``gift_card_NNNNNNN`` / ``paypal_NNNNNNN``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .data_model import (
    CreditCard,
    GiftCard,
    Order,
    OrderFullfilment,
    OrderItem,
    OrderPayment,
    Paypal,
    Product,
    RetailDB,
    User,
    UserAddress,
    UserName,
    Variant,
)

CATALOG: dict[str, tuple[tuple[float, float], dict[str, tuple[str, ...]]]] = {
    "T-Shirt": ((9.99, 59.99), {"color": ("black", "white", "blue", "red", "green"), "size": ("S", "M", "L", "XL")}),
    "Water Bottle": (
        (12.0, 65.0),
        {"capacity": ("500ml", "750ml", "1000ml"), "material": ("glass", "stainless steel", "plastic")},
    ),
    "Office Chair": ((120.0, 520.0), {"material": ("fabric", "leather", "mesh"), "color": ("black", "gray", "blue")}),
    "Mechanical Keyboard": (
        (80.0, 280.0),
        {
            "switch type": ("linear", "tactile", "clicky"),
            "backlight": ("none", "white", "RGB"),
            "size": ("full size", "80%"),
        },
    ),
    "Smart Thermostat": (
        (150.0, 300.0),
        {
            "compatibility": ("Apple HomeKit", "Google Assistant", "Amazon Alexa"),
            "color": ("white", "black", "stainless steel"),
        },
    ),
    "Running Shoes": (
        (60.0, 190.0),
        {"size": ("8", "9", "10", "11"), "color": ("black", "white", "yellow"), "material": ("mesh", "synthetic")},
    ),
    "Desk Lamp": (
        (25.0, 160.0),
        {
            "color": ("black", "white", "silver"),
            "brightness": ("low", "medium", "high"),
            "power source": ("USB", "AC adapter", "battery"),
        },
    ),
    "Backpack": (
        (30.0, 230.0),
        {
            "color": ("black", "grey", "navy", "green"),
            "size": ("small", "medium", "large"),
            "material": ("nylon", "polyester", "leather"),
        },
    ),
    "Headphones": (
        (40.0, 380.0),
        {
            "type": ("on-ear", "over-ear", "in-ear"),
            "connectivity": ("wired", "wireless"),
            "color": ("black", "white", "red"),
        },
    ),
    "Coffee Maker": (
        (45.0, 320.0),
        {
            "color": ("black", "stainless steel"),
            "capacity": ("1 cup", "4 cups", "8 cups", "12 cups"),
            "type": ("drip", "espresso", "french press"),
        },
    ),
    "Yoga Mat": (
        (18.0, 120.0),
        {
            "thickness": ("4mm", "5mm", "6mm"),
            "material": ("PVC", "natural rubber", "TPE"),
            "color": ("pink", "purple", "blue"),
        },
    ),
    "Bluetooth Speaker": (
        (35.0, 300.0),
        {
            "color": ("black", "blue", "red"),
            "battery life": ("10 hours", "20 hours"),
            "water resistance": ("yes", "no"),
        },
    ),
    "Tablet": (
        (180.0, 1100.0),
        {
            "screen size": ("8-inch", "10-inch", "12-inch"),
            "storage": ("64GB", "128GB", "256GB"),
            "color": ("black", "silver", "gold"),
        },
    ),
    "Electric Kettle": (
        (25.0, 160.0),
        {
            "capacity": ("1L", "1.5L", "2L"),
            "material": ("plastic", "stainless steel", "glass"),
            "color": ("white", "black", "silver"),
        },
    ),
    "Hiking Boots": (
        (90.0, 260.0),
        {"size": ("8", "9", "10", "11", "12"), "material": ("leather", "synthetic"), "waterproof": ("yes", "no")},
    ),
    "Air Purifier": (
        (90.0, 520.0),
        {
            "room size": ("small", "medium", "large"),
            "filter type": ("HEPA", "carbon", "ionic"),
            "features": ("quiet operation", "smart sensors", "night mode"),
        },
    ),
}
FIRST_NAMES = (
    "Noah", "Emma", "Liam", "Olivia", "Yusuf", "Mia", "Ethan", "Sofia", "Aarav", "Chen", "Isabella", "Mason",
    "Lucas", "Amelia", "Omar", "Fatima", "Daiki", "Harper", "Raj", "Anya", "Mateo", "Lei", "Ivan", "Chloe",
)  # fmt: skip
LAST_NAMES = (
    "Brown", "Rossi", "Nguyen", "Garcia", "Smith", "Khan", "Kim", "Silva", "Johnson", "Patel", "Muller", "Lopez",
    "Ito", "Wilson", "Sanchez", "Moore", "Ahmed", "Lee", "Novak", "Ali", "Taylor", "Anderson", "Hernandez", "Jackson",
)  # fmt: skip
STREETS = ("Sunset Drive", "River Road", "Main Street", "Maple Avenue", "Elm Street", "Lakeview Drive", "Cedar Street",
           "Park Avenue", "Hickory Lane", "Oak Street", "Willow Lane", "Pine Lane")  # fmt: skip
CITIES = (("Denver", "CO", "80"), ("New York", "NY", "10"), ("Philadelphia", "PA", "19"), ("Austin", "TX", "78"),
          ("Seattle", "WA", "98"), ("Chicago", "IL", "60"), ("San Diego", "CA", "92"), ("Phoenix", "AZ", "85"),
          ("Columbus", "OH", "43"), ("Charlotte", "NC", "28"))  # fmt: skip
CARD_BRANDS = ("visa", "mastercard")
STATUS_WEIGHTS: tuple[tuple[str, int], ...] = (("pending", 42), ("delivered", 37), ("processed", 10), ("cancelled", 10))


def _digits(rng: random.Random, count: int) -> str:
    return str(rng.randrange(10 ** (count - 1), 10**count))


def _unique(rng: random.Random, taken: set[str], make: str, count: int) -> str:
    while True:
        candidate = make + _digits(rng, count)
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def _address(rng: random.Random) -> UserAddress:
    city, state, prefix = rng.choice(CITIES)
    return UserAddress(
        address1=f"{rng.randrange(100, 999)} {rng.choice(STREETS)}",
        address2=rng.choice((f"Suite {rng.randrange(100, 999)}", f"Apt {rng.randrange(1, 99)}", "")),
        city=city,
        country="USA",
        state=state,
        zip=prefix + _digits(rng, 3),
    )


def generate_products(rng: random.Random, count: int, variants: tuple[int, int], taken: set[str]) -> dict[str, Product]:
    """``count`` product types (distinct names from the catalog), each with a few distinct variants."""
    if not 1 <= count <= len(CATALOG):
        raise ValueError(f"products must be between 1 and {len(CATALOG)}, got {count}")
    products: dict[str, Product] = {}
    for name in rng.sample(sorted(CATALOG), count):
        (low, high), options = CATALOG[name]
        product_id = _unique(rng, taken, "", 10)
        combos: list[dict[str, str]] = []
        wanted = rng.randint(*variants)
        for _ in range(wanted * 4):
            combo = {key: rng.choice(values) for key, values in options.items()}
            if combo not in combos:
                combos.append(combo)
            if len(combos) == wanted:
                break
        product_variants = {}
        for combo in combos:
            item_id = _unique(rng, taken, "", 10)
            product_variants[item_id] = Variant(
                item_id=item_id, options=combo, available=rng.random() < 0.8, price=round(rng.uniform(low, high), 2)
            )
        products[product_id] = Product(name=name, product_id=product_id, variants=product_variants)
    return products


def generate_retail_db(
    rng: random.Random,
    users: int = 20,
    products: int = 10,
    variants_per_product: tuple[int, int] = (2, 6),
    orders_per_user: tuple[int, int] = (1, 3),
    items_per_order: tuple[int, int] = (1, 4),
) -> RetailDB:
    """A retail database drawn from ``rng`` alone: products with variants, users with payment methods, orders.

    Order statuses follow the benchmark's mix (pending, delivered, processed, cancelled); processed and
    delivered orders have fulfillments with tracking ids; cancelled ones carry a payment and its refund.
    """
    if users < 1:
        raise ValueError(f"users must be at least 1, got {users}")
    taken: set[str] = set()
    catalog = generate_products(rng, products, variants_per_product, taken)
    all_variants = [(product, variant) for product in catalog.values() for variant in product.variants.values()]
    db = RetailDB(products=catalog, users={}, orders={})
    statuses, weights = zip(*STATUS_WEIGHTS, strict=True)
    for _ in range(users):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        user_id = _unique(rng, taken, f"{first.lower()}_{last.lower()}_", 4)
        methods: dict[str, CreditCard | GiftCard | Paypal] = {}
        for source in rng.sample(("credit_card", "gift_card", "paypal"), rng.randint(1, 3)):
            method_id = _unique(rng, taken, f"{source}_", 7)
            if source == "credit_card":
                methods[method_id] = CreditCard(
                    source="credit_card", id=method_id, brand=rng.choice(CARD_BRANDS), last_four=_digits(rng, 4)
                )
            elif source == "gift_card":
                methods[method_id] = GiftCard(source="gift_card", id=method_id, balance=round(rng.uniform(0, 250), 2))
            else:
                methods[method_id] = Paypal(source="paypal", id=method_id)
        address = _address(rng)
        user = User(
            user_id=user_id,
            name=UserName(first_name=first, last_name=last),
            address=address,
            email=f"{first.lower()}.{last.lower()}{_digits(rng, 4)}@example.com",
            payment_methods=methods,
            orders=[],
        )
        db.users[user_id] = user
        for _ in range(rng.randint(*orders_per_user)):
            order = _order(rng, taken, user, all_variants, items_per_order, rng.choices(statuses, weights)[0])
            db.orders[order.order_id] = order
            user.orders.append(order.order_id)
    return db


def _order(
    rng: random.Random,
    taken: set[str],
    user: User,
    all_variants: Sequence[tuple[Product, Variant]],
    items_per_order: tuple[int, int],
    status: str,
) -> Order:
    order_id = _unique(rng, taken, "#W", 7)
    chosen = [rng.choice(all_variants) for _ in range(rng.randint(*items_per_order))]
    items = [
        OrderItem(
            name=product.name,
            product_id=product.product_id,
            item_id=variant.item_id,
            price=variant.price,
            options=dict(variant.options),
        )
        for product, variant in chosen
    ]
    method_id = rng.choice(sorted(user.payment_methods))
    total = round(sum(item.price for item in items), 2)
    history = [OrderPayment(transaction_type="payment", amount=total, payment_method_id=method_id)]
    if status == "cancelled":
        history.append(OrderPayment(transaction_type="refund", amount=total, payment_method_id=method_id))
    fulfillments = []
    if status in ("processed", "delivered"):
        fulfillments.append(OrderFullfilment(tracking_id=[_digits(rng, 12)], item_ids=[item.item_id for item in items]))
    address = user.address.model_copy() if rng.random() < 0.85 else _address(rng)
    return Order(
        order_id=order_id,
        user_id=user.user_id,
        address=address,
        items=items,
        status=status,  # type: ignore[arg-type]
        fulfillments=fulfillments,
        payment_history=history,
    )
