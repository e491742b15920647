"""generate_retail_db: deterministic per seed, valid tau2 retail data, usable by every write tool."""

from __future__ import annotations

import random

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.retail import RETAIL, RetailDB, generate_retail_db


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_seed_same_database(seed: int) -> None:
    first = generate_retail_db(random.Random(seed), users=8, products=5)
    second = generate_retail_db(random.Random(seed), users=8, products=5)
    assert RETAIL.state_hash(first) == RETAIL.state_hash(second)
    assert RETAIL.state_hash(first) != RETAIL.state_hash(
        generate_retail_db(random.Random(seed + 100), users=8, products=5)
    )


def test_records_are_consistent_and_round_trip() -> None:
    db = generate_retail_db(random.Random(7), users=30, products=12, variants_per_product=(3, 5))
    assert len(db.users) == 30 and len(db.products) == 12
    again = RetailDB.model_validate(RETAIL.dump_state(db))
    assert RETAIL.state_hash(again) == RETAIL.state_hash(db)
    item_to_product = {i: p.product_id for p in db.products.values() for i in p.variants}
    statuses = set()
    for order in db.orders.values():
        statuses.add(order.status)
        user = db.users[order.user_id]
        assert order.order_id in user.orders and order.order_id.startswith("#W")
        assert all(item_to_product[item.item_id] == item.product_id for item in order.items)
        assert order.payment_history[0].payment_method_id in user.payment_methods
        assert order.payment_history[0].amount == round(sum(item.price for item in order.items), 2)
    assert {"pending", "delivered"} <= statuses
    sources = {m.source for u in db.users.values() for m in u.payment_methods.values()}
    assert sources == {"credit_card", "gift_card", "paypal"}


def test_size_knobs_are_checked() -> None:
    with pytest.raises(ValueError, match="products must be between"):
        generate_retail_db(random.Random(0), products=0)
    with pytest.raises(ValueError, match="users must be at least 1"):
        generate_retail_db(random.Random(0), users=0)


def test_write_tools_work_on_generated_data() -> None:
    db = generate_retail_db(random.Random(11), users=10, products=6)
    pending = next(o for o in db.orders.values() if o.status == "pending")
    result = RETAIL.toolset.invoke(
        db,
        ToolCall(name="cancel_pending_order", arguments={"order_id": pending.order_id, "reason": "no longer needed"}),
    )
    assert not result.error, result.content
    assert db.orders[pending.order_id].status == "cancelled"
    db.restore()
    assert db.orders[pending.order_id].status == "pending"
