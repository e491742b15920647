"""Retail tools one by one on the benchmark's db.json: upstream's error messages, result strings and quirks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import ToolCall, ToolResult
from trace_envs.domains.retail import RETAIL, RetailDB
from trace_envs.domains.tau2_common import file_db_dump

ORDER_NULLS = {
    "cancel_reason": None,
    "exchange_items": None,
    "exchange_new_items": None,
    "exchange_payment_method_id": None,
    "exchange_price_difference": None,
    "return_items": None,
    "return_payment_method_id": None,
}


@pytest.fixture(scope="module")
def raw(shared_data: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((shared_data / "tau2" / "retail" / "db.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def module_db(shared_data: Path) -> RetailDB:
    return RETAIL.load_file(shared_data / "tau2" / "retail" / "db.json")


@pytest.fixture
def db(module_db: RetailDB) -> Iterator[RetailDB]:
    module_db.restore()
    yield module_db
    module_db.restore()


def call(db: RetailDB, name: str, **arguments: Any) -> ToolResult:
    return RETAIL.toolset.invoke(db, ToolCall(name=name, arguments=arguments, id="t"))


def first_order(raw: dict[str, Any], status: str, min_items: int = 1) -> dict[str, Any]:
    for order in raw["orders"].values():
        if order["status"] == status and len({i["product_id"] for i in order["items"]}) >= min_items:
            return order  # type: ignore[no-any-return]
    raise AssertionError(f"no {status} order in db.json")


def method_of(raw: dict[str, Any], user_id: str, source: str) -> str | None:
    return next((m["id"] for m in raw["users"][user_id]["payment_methods"].values() if m["source"] == source), None)


def test_db_round_trips_as_json_data(raw: dict[str, Any], module_db: RetailDB) -> None:
    assert file_db_dump(module_db) == raw


def test_read_tools_return_upstream_json(db: RetailDB, raw: dict[str, Any]) -> None:
    order = next(iter(raw["orders"].values()))
    assert call(db, "get_order_details", order_id=order["order_id"]).content == json.dumps({**order, **ORDER_NULLS})
    user = next(iter(raw["users"].values()))
    assert call(db, "get_user_details", user_id=user["user_id"]).content == json.dumps(user)
    product = next(iter(raw["products"].values()))
    assert call(db, "get_product_details", product_id=product["product_id"]).content == json.dumps(product)
    variant = next(iter(product["variants"].values()))
    assert call(db, "get_item_details", item_id=variant["item_id"]).content == json.dumps(variant)
    types = call(db, "list_all_product_types").content
    assert types == json.dumps({p["name"]: p["product_id"] for p in raw["products"].values()}, sort_keys=True)
    assert types.startswith('{"Action Camera": "3377618313", "Air Purifier": "3821016478"')
    assert call(db, "find_user_id_by_email", email=user["email"].upper()).content == user["user_id"]
    found = call(db, "find_user_id_by_name_zip", first_name="NOAH", last_name="brown", zip=user["address"]["zip"])
    assert found.content == "noah_brown_6181"


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_order_details", {"order_id": "#W0"}, "Order not found"),
        ("get_user_details", {"user_id": "nobody"}, "User not found"),
        ("get_product_details", {"product_id": "1"}, "Product not found"),
        ("get_item_details", {"item_id": "1"}, "Item not found"),
        ("find_user_id_by_email", {"email": "x@y.z"}, "User not found"),
        ("find_user_id_by_name_zip", {"first_name": "A", "last_name": "B", "zip": "0"}, "User not found"),
        ("cancel_pending_order", {"order_id": "#W0", "reason": "no longer needed"}, "Order not found"),
        ("modify_user_address", {"user_id": "nobody", "address1": "", "address2": "", "city": "", "state": "",
                                 "country": "", "zip": ""}, "User not found"),
        ("get_user_details", {}, "RetailTools.get_user_details() missing 1 required positional argument: 'user_id'"),
        ("get_user_details", {"user_id": "x", "foo": 1}, "RetailTools.get_user_details() got an unexpected keyword argument 'foo'"),
    ],
)  # fmt: skip
def test_lookup_and_argument_errors(db: RetailDB, name: str, arguments: dict[str, Any], message: str) -> None:
    result = call(db, name, **arguments)
    assert result.error
    assert result.content == f"Error: {message}"


def test_status_checks(db: RetailDB, raw: dict[str, Any]) -> None:
    delivered = first_order(raw, "delivered")
    pending = first_order(raw, "pending")
    pm = delivered["payment_history"][0]["payment_method_id"]
    assert call(db, "cancel_pending_order", order_id=delivered["order_id"], reason="no longer needed").content == (
        "Error: Non-pending order cannot be cancelled"
    )
    assert call(db, "cancel_pending_order", order_id=pending["order_id"], reason="changed my mind").content == (
        "Error: Invalid reason"
    )
    args = {"item_ids": [], "new_item_ids": [], "payment_method_id": pm}
    assert call(db, "modify_pending_order_items", order_id=delivered["order_id"], **args).content == (
        "Error: Non-pending order cannot be modified"
    )
    assert call(db, "exchange_delivered_order_items", order_id=pending["order_id"], **args).content == (
        "Error: Non-delivered order cannot be exchanged"
    )
    assert call(
        db, "return_delivered_order_items", order_id=pending["order_id"], item_ids=[], payment_method_id=pm
    ).content == ("Error: Non-delivered order cannot be returned")
    address = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA", "zip": "1"}
    assert call(db, "modify_pending_order_address", order_id=delivered["order_id"], **address).content == (
        "Error: Non-pending order cannot be modified"
    )
    assert call(db, "modify_pending_order_payment", order_id=delivered["order_id"], payment_method_id=pm).content == (
        "Error: Non-pending order cannot be modified"
    )
    assert not db.dirty


def test_item_count_messages_differ_per_tool(db: RetailDB, raw: dict[str, Any]) -> None:
    delivered = first_order(raw, "delivered")
    pending = first_order(raw, "pending")
    pm_d = delivered["payment_history"][0]["payment_method_id"]
    pm_p = pending["payment_history"][0]["payment_method_id"]
    bad = ["0000000000"]
    result = call(
        db,
        "exchange_delivered_order_items",
        order_id=delivered["order_id"],
        item_ids=bad,
        new_item_ids=bad,
        payment_method_id=pm_d,
    )
    assert result.content == "Error: Number of 0000000000 not found."
    result = call(
        db,
        "modify_pending_order_items",
        order_id=pending["order_id"],
        item_ids=bad,
        new_item_ids=bad,
        payment_method_id=pm_p,
    )
    assert result.content == "Error: 0000000000 not found"
    result = call(
        db, "return_delivered_order_items", order_id=delivered["order_id"], item_ids=bad, payment_method_id=pm_d
    )
    assert result.content == "Error: Some item not found"
    item = [delivered["items"][0]["item_id"]]
    result = call(
        db,
        "exchange_delivered_order_items",
        order_id=delivered["order_id"],
        item_ids=item,
        new_item_ids=[],
        payment_method_id=pm_d,
    )
    assert result.content == "Error: The number of items to be exchanged should match."
    item_p = [pending["items"][0]["item_id"]]
    result = call(
        db,
        "modify_pending_order_items",
        order_id=pending["order_id"],
        item_ids=item_p,
        new_item_ids=[],
        payment_method_id=pm_p,
    )
    assert result.content == "Error: The number of items to be exchanged should match"
    result = call(
        db,
        "modify_pending_order_items",
        order_id=pending["order_id"],
        item_ids=item_p,
        new_item_ids=item_p,
        payment_method_id=pm_p,
    )
    assert result.content == "Error: The new item id should be different from the old item id"
    result = call(
        db,
        "modify_pending_order_items",
        order_id=pending["order_id"],
        item_ids=item_p,
        new_item_ids=["0"],
        payment_method_id=pm_p,
    )
    assert result.content == "Error: Variant not found"
    assert not db.dirty


def test_cancel_refunds_gift_card_and_records_reason(db: RetailDB, raw: dict[str, Any]) -> None:
    order = next(
        o for o in raw["orders"].values()
        if o["status"] == "pending" and o["payment_history"][0]["payment_method_id"].startswith("gift_card")
    )  # fmt: skip
    payment = order["payment_history"][0]
    balance = raw["users"][order["user_id"]]["payment_methods"][payment["payment_method_id"]]["balance"]
    result = call(db, "cancel_pending_order", order_id=order["order_id"], reason="ordered by mistake")
    refund = {
        "transaction_type": "refund",
        "amount": payment["amount"],
        "payment_method_id": payment["payment_method_id"],
    }
    expected = {**order, **ORDER_NULLS, "status": "cancelled", "cancel_reason": "ordered by mistake"}
    expected["payment_history"] = [*order["payment_history"], refund]
    assert result.content == json.dumps(expected)
    gift = db.users[order["user_id"]].payment_methods[payment["payment_method_id"]]
    assert gift.balance == round(balance + payment["amount"], 2)  # type: ignore[union-attr]


def test_modify_items_keeps_the_last_variant_bug_and_unrounded_difference(db: RetailDB, raw: dict[str, Any]) -> None:
    order = first_order(raw, "pending", min_items=2)
    items = [order["items"][0], next(i for i in order["items"] if i["product_id"] != order["items"][0]["product_id"])]
    new_variants = []
    for item in items:
        variants = raw["products"][item["product_id"]]["variants"].values()
        new_variants.append(next(v for v in variants if v["available"] and v["item_id"] != item["item_id"]))
    method = next(m for m in raw["users"][order["user_id"]]["payment_methods"].values() if m["source"] != "gift_card")
    result = call(
        db,
        "modify_pending_order_items",
        order_id=order["order_id"],
        item_ids=[i["item_id"] for i in items],
        new_item_ids=[v["item_id"] for v in new_variants],
        payment_method_id=method["id"],
    )
    assert not result.error, result.content
    dumped = json.loads(result.content)
    diff = 0
    for item, variant in zip(items, new_variants, strict=True):
        diff += variant["price"] - item["price"]
    last = new_variants[-1]
    changed = [i for i in dumped["items"] if i["item_id"] in {v["item_id"] for v in new_variants}]
    assert len(changed) == 2
    assert all(i["price"] == last["price"] and i["options"] == last["options"] for i in changed)
    assert dumped["status"] == "pending (item modified)"
    assert dumped["payment_history"][-1] == {
        "transaction_type": "payment" if diff > 0 else "refund",
        "amount": abs(diff),
        "payment_method_id": method["id"],
    }
    again = call(
        db,
        "modify_pending_order_items",
        order_id=order["order_id"],
        item_ids=[],
        new_item_ids=[],
        payment_method_id=method["id"],
    )
    assert again.content == "Error: Non-pending order cannot be modified"


def test_modify_payment_and_address_accept_item_modified_orders(db: RetailDB, raw: dict[str, Any]) -> None:
    order = first_order(raw, "pending")
    db.touch(db.orders, order["order_id"])
    db.orders[order["order_id"]].status = "pending (item modified)"
    address = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA", "zip": "1"}
    result = call(db, "modify_pending_order_address", order_id=order["order_id"], **address)
    assert json.loads(result.content)["address"] == {
        "address1": "1 A St",
        "address2": "",
        "city": "X",
        "country": "USA",
        "state": "CA",
        "zip": "1",
    }
    current = order["payment_history"][0]["payment_method_id"]
    same = call(db, "modify_pending_order_payment", order_id=order["order_id"], payment_method_id=current)
    assert same.content == "Error: The new payment method should be different from the current one"
    missing = call(db, "modify_pending_order_payment", order_id=order["order_id"], payment_method_id="paypal_0")
    assert missing.content == "Error: Payment method not found"


def test_exchange_and_return_store_sorted_ids(db: RetailDB, raw: dict[str, Any]) -> None:
    order = first_order(raw, "delivered", min_items=2)
    ids = [i["item_id"] for i in order["items"]]
    original = order["payment_history"][0]["payment_method_id"]
    result = call(
        db,
        "return_delivered_order_items",
        order_id=order["order_id"],
        item_ids=list(reversed(ids)),
        payment_method_id=original,
    )
    dumped = json.loads(result.content)
    assert dumped["status"] == "return requested"
    assert dumped["return_items"] == sorted(ids)
    db.restore()
    other = next(
        (
            m
            for m in raw["users"][order["user_id"]]["payment_methods"]
            if m != original and not m.startswith("gift_card")
        ),
        None,
    )
    if other is not None:
        result = call(
            db, "return_delivered_order_items", order_id=order["order_id"], item_ids=ids, payment_method_id=other
        )
        assert result.content == "Error: Payment method should be the original payment method"


def test_modify_user_address_returns_user(db: RetailDB, raw: dict[str, Any]) -> None:
    user = next(iter(raw["users"].values()))
    address = {"address1": "1 A St", "address2": "Apt 2", "city": "X", "state": "CA", "country": "USA", "zip": "9"}
    result = call(db, "modify_user_address", user_id=user["user_id"], **address)
    expected = {**user, "address": {k: address[k] for k in ("address1", "address2", "city", "country", "state", "zip")}}
    assert result.content == json.dumps(expected)
    bad = call(db, "modify_user_address", user_id=user["user_id"], **{**address, "zip": 5})
    assert bad.content == (
        "Error: 1 validation error for UserAddress\nzip\n  Input should be a valid string "
        "[type=string_type, input_value=5, input_type=int]\n"
        "    For further information visit https://errors.pydantic.dev/2.12/v/string_type"
    )
