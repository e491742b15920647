"""Products whose variants near-miss the one a customer describes (the structured-data env's retail tasks).

An :class:`Ask` is how the customer names the variant they want: relative to the item they own, spelled
out, or the cheapest in stock with one option. :func:`variant_rows` draws the product's variant rows so that
a near miss (one other option differs) is listed before the target and, for "cheapest", every other
matching variant is dearer or sold out; :func:`catalog_product` makes the other products. Every random
choice comes from the ``rng`` passed in, in a fixed order (the env's golden fingerprints depend on it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from trace_envs.domains.retail.generator import CATALOG
from trace_envs.domains.retail.records import describe_options, retail_item, retail_order
from trace_envs.domains.tau2_records import Record, price_with_cents, unique_id

Row = tuple[dict[str, str], bool, float]
"""One variant row: its options, whether it is in stock, its price."""


@dataclass(frozen=True)
class Ask:
    """The request: how it is phrased, the changed option and value, the owned and the target options."""

    style: str
    key: str
    wanted: str
    current: dict[str, str]
    target: dict[str, str]
    price: float

    def request(self, noun: str) -> str:
        """How the customer names the variant they want."""
        if self.style == "relative":
            return f"the same {noun} as the one I have, but with {self.key} {self.wanted} (everything else the same)"
        if self.style == "explicit":
            return f"the {noun} with {describe_options(self.target)}"
        return f"the cheapest {noun} with {self.key} {self.wanted} that is in stock"


def variant_rows(
    rng: random.Random, distractors: int, entry: tuple[tuple[float, float], dict[str, tuple[str, ...]]]
) -> tuple[Ask, list[Row]]:
    """The request and a product's variant rows (``entry`` is its ``CATALOG`` price range and options): the
    owned item, the near miss before the target, and up to ``distractors - 1`` other variants."""
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
    variants: list[Row] = [
        (current, True, price_with_cents(rng, low, high)),
        (near_options, style != "cheapest", trap_price),
    ]
    for _ in range(distractors - 1):
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
    return Ask(style, key, wanted, current, target_options, target_price), variants


def catalog_product(
    rng: random.Random, taken: set[str], name: str, options: dict[str, tuple[str, ...]], count: int = 0
) -> Record:
    """A product record of ``CATALOG[name]`` with up to ``count`` random distinct variants drawn from
    ``options`` (none when ``count`` is 0), all in stock."""
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


def asked_products(rng: random.Random, taken: set[str], distractors: int) -> tuple[Ask, Record, list[Record]]:
    """Three catalogue products: the one the customer asks about, with :func:`variant_rows`' variants, and two
    others with 2–3 variants each; with the request."""
    names = rng.sample(sorted(CATALOG), 3)
    product = catalog_product(rng, taken, names[0], {})
    ask, variants = variant_rows(rng, distractors, CATALOG[names[0]])
    for combo, available, price in variants:
        item_id = unique_id(rng, taken, "", 10)
        product["variants"][item_id] = {"item_id": item_id, "options": combo, "available": available, "price": price}
    others = [catalog_product(rng, taken, name, CATALOG[name][1], count=rng.randint(2, 3)) for name in names[1:]]
    return ask, product, others


def asked_orders(
    rng: random.Random,
    taken: set[str],
    user: Record,
    owned: tuple[Record, str],
    others: list[Record],
    status: str,
    noise: int,
) -> dict[str, Record]:
    """The user's orders, paid with their one method: first the order in ``status`` holding the ``owned``
    (product, item id) and up to two items of ``others``, then ``noise`` one-item orders of ``others``."""
    method_id = next(iter(user["payment_methods"]))
    items = [retail_item(*owned)]
    for extra in others[: rng.randint(0, 2)]:
        items.append(retail_item(extra, rng.choice(list(extra["variants"]))))
    rng.shuffle(items)
    order = retail_order(rng, taken, user, items, status, method_id)
    orders = {order["order_id"]: order}
    for _ in range(noise):
        extra = rng.choice(others)
        item = retail_item(extra, rng.choice(list(extra["variants"])))
        extra_order = retail_order(rng, taken, user, [item], rng.choice(("delivered", "processed")), method_id)
        orders[extra_order["order_id"]] = extra_order
    return orders
