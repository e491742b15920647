"""The 16 tau2-bench retail tools: exact names, arguments, descriptions, validation order, messages.

Every tool is ``fn(db, **arguments)``; errors are raised (``ValueError`` with upstream's text) and
become ``Error: <text>`` tool messages through :class:`~trace_envs.domains.tau2_common.Tau2Toolset`.
Write tools journal each record before changing it (``db.touch``) so resets are cheap.

Upstream quirks kept for hash parity (see docs/tau2.md, "Compatibility notes"):
``modify_pending_order_items`` gives every modified item the price/options of the *last* new variant
and stores the unrounded price difference; exchange/return store *sorted* id lists; "pending" means
``status == "pending"`` for cancel/modify-items but ``"pending" in status`` for address/payment changes.
"""

from __future__ import annotations

import json

from trace_envs.domains.tau2_common import Tau2Toolset, calculate, transfer_to_human_agents
from trace_envs.domains.tools import tool

from .data_model import (
    GiftCard,
    Order,
    OrderPayment,
    PaymentMethod,
    Product,
    RetailDB,
    User,
    UserAddress,
    Variant,
)

OWNER = "RetailTools"
"""Upstream toolkit class name, as CPython names it in argument errors."""


# ----- shared lookups (upstream's private helpers) -----------------------------------------------------------
def _get_order(db: RetailDB, order_id: str) -> Order:
    if order_id not in db.orders:
        raise ValueError("Order not found")
    return db.orders[order_id]


def _get_user(db: RetailDB, user_id: str) -> User:
    if user_id not in db.users:
        raise ValueError("User not found")
    return db.users[user_id]


def _get_product(db: RetailDB, product_id: str) -> Product:
    if product_id not in db.products:
        raise ValueError("Product not found")
    return db.products[product_id]


def _get_variant(db: RetailDB, product_id: str, variant_id: str) -> Variant:
    product = _get_product(db, product_id)
    if variant_id not in product.variants:
        raise ValueError("Variant not found")
    return product.variants[variant_id]


def _get_payment_method(db: RetailDB, user_id: str, payment_method_id: str) -> PaymentMethod:
    user = _get_user(db, user_id)
    if payment_method_id not in user.payment_methods:
        raise ValueError("Payment method not found")
    return user.payment_methods[payment_method_id]


def _is_pending_order(order: Order) -> bool:
    return "pending" in order.status


def _touch_order_and_user(db: RetailDB, order: Order) -> None:
    db.touch(db.orders, order.order_id)
    db.touch(db.users, order.user_id)


# ----- tools, in upstream's definition order ------------------------------------------------------------------
@tool(kind="write")
def cancel_pending_order(db: RetailDB, order_id: str, reason: str) -> Order:
    """Cancel a pending order. If the order is already processed or delivered,

    it cannot be cancelled. The agent needs to explain the cancellation detail
    and ask for explicit user confirmation (yes/no) to proceed. If the user confirms,
    the order status will be changed to 'cancelled' and the payment will be refunded.
    The refund will be added to the user's gift card balance immediately if the payment
    was made using a gift card, otherwise the refund would take 5-7 business days to process.
    The function returns the order details after the cancellation.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        reason: The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'.
    """
    order = _get_order(db, order_id)
    if order.status != "pending":
        raise ValueError("Non-pending order cannot be cancelled")
    if reason not in {"no longer needed", "ordered by mistake"}:
        raise ValueError("Invalid reason")
    _touch_order_and_user(db, order)
    refunds = []
    for payment in order.payment_history:
        payment_id = payment.payment_method_id
        refunds.append(OrderPayment(transaction_type="refund", amount=payment.amount, payment_method_id=payment_id))
        method = _get_payment_method(db, order.user_id, payment_id)
        if isinstance(method, GiftCard):
            method.balance += payment.amount
            method.balance = round(method.balance, 2)
    order.status = "cancelled"
    order.cancel_reason = reason  # type: ignore[assignment]  # validated above, stored as passed
    order.payment_history.extend(refunds)
    return order


@tool(kind="write")
def exchange_delivered_order_items(
    db: RetailDB, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> Order:
    """Exchange items in a delivered order to new items of the same product type.

    For a delivered order, return or exchange can be only done once by the agent.
    The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        item_ids: The item ids to be exchanged, each such as '1008292230'. There could be duplicate items in the list.
        new_item_ids: The item ids to be exchanged for, each such as '1008292230'.
            There could be duplicate items in the list. Each new item id should match the item id
            in the same position and be of the same product.
        payment_method_id: The payment method id to pay or receive refund for the item price difference,
            such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up
            from the user or order details.
    """
    order = _get_order(db, order_id)
    if order.status != "delivered":
        raise ValueError("Non-delivered order cannot be exchanged")
    all_item_ids = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > all_item_ids.count(item_id):
            raise ValueError(f"Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match.")
    diff_price: float = 0  # upstream starts from int 0 (stays int when nothing is exchanged)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = next((item for item in order.items if item.item_id == item_id), None)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        variant = _get_variant(db, item.product_id, new_item_id)
        if not variant.available:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff_price += variant.price - item.price
    diff_price = round(diff_price, 2)
    method = _get_payment_method(db, order.user_id, payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff_price:
        raise ValueError("Insufficient gift card balance to pay for the price difference")
    db.touch(db.orders, order.order_id)
    order.status = "exchange requested"
    order.exchange_items = sorted(item_ids)
    order.exchange_new_items = sorted(new_item_ids)
    order.exchange_payment_method_id = payment_method_id
    order.exchange_price_difference = diff_price
    return order


@tool(kind="read")
def find_user_id_by_name_zip(db: RetailDB, first_name: str, last_name: str, zip: str) -> str:
    """Find user id by first name, last name, and zip code. If the user is not found, the function

    will return an error message. By default, find user id by email, and only call this function
    if the user is not found by email or cannot remember email.

    Args:
        first_name: The first name of the customer, such as 'John'.
        last_name: The last name of the customer, such as 'Doe'.
        zip: The zip code of the customer, such as '12345'.
    """
    for user_id, user in db.users.items():
        if (
            user.name.first_name.lower() == first_name.lower()
            and user.name.last_name.lower() == last_name.lower()
            and user.address.zip == zip
        ):
            return user_id
    raise ValueError("User not found")


@tool(kind="read")
def find_user_id_by_email(db: RetailDB, email: str) -> str:
    """Find user id by email. If the user is not found, the function will return an error message.

    Args:
        email: The email of the user, such as 'something@example.com'.
    """
    for user_id, user in db.users.items():
        if user.email.lower() == email.lower():
            return user_id
    raise ValueError("User not found")


@tool(kind="read")
def get_order_details(db: RetailDB, order_id: str) -> Order:
    """Get the status and details of an order.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
    """
    return _get_order(db, order_id)


@tool(kind="read")
def get_product_details(db: RetailDB, product_id: str) -> Product:
    """Get the inventory details of a product.

    Args:
        product_id: The product id, such as '6086499569'. Be careful the product id is different from the item id.
    """
    return _get_product(db, product_id)


@tool(kind="read")
def get_item_details(db: RetailDB, item_id: str) -> Variant:
    """Get the inventory details of an item.

    Args:
        item_id: The item id, such as '6086499569'. Be careful the item id is different from the product id.
    """
    for product in db.products.values():
        if item_id in product.variants:
            return product.variants[item_id]
    raise ValueError("Item not found")


@tool(kind="read")
def get_user_details(db: RetailDB, user_id: str) -> User:
    """Get the details of a user, including their orders.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
    """
    return _get_user(db, user_id)


@tool(kind="read")
def list_all_product_types(db: RetailDB) -> str:
    """List the name and product id of all product types.

    Each product type has a variety of different items with unique item ids and options.
    There are only 50 product types in the store.
    """
    product_dict = {product.name: product.product_id for product in db.products.values()}
    return json.dumps(product_dict, sort_keys=True)


@tool(kind="write")
def modify_pending_order_address(
    db: RetailDB, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> Order:
    """Modify the shipping address of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        address1: The first line of the address, such as '123 Main St'.
        address2: The second line of the address, such as 'Apt 1' or ''.
        city: The city, such as 'San Francisco'.
        state: The state, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The zip code, such as '12345'.
    """
    order = _get_order(db, order_id)
    if not _is_pending_order(order):
        raise ValueError("Non-pending order cannot be modified")
    address = UserAddress(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip)
    db.touch(db.orders, order.order_id)
    order.address = address
    return order


@tool(kind="write")
def modify_pending_order_items(
    db: RetailDB, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> Order:
    """Modify items in a pending order to new items of the same product type. For a pending order, this function can only be called once. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        item_ids: The item ids to be modified, each such as '1008292230'. There could be duplicate items in the list.
        new_item_ids: The item ids to be modified for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product.
        payment_method_id: The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.
    """
    order = _get_order(db, order_id)
    if order.status != "pending":
        raise ValueError("Non-pending order cannot be modified")
    all_item_ids = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > all_item_ids.count(item_id):
            raise ValueError(f"{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match")
    diff_price: float = 0
    variant: Variant | None = None
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        if item_id == new_item_id:
            raise ValueError("The new item id should be different from the old item id")
        item = next((item for item in order.items if item.item_id == item_id), None)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        variant = _get_variant(db, item.product_id, new_item_id)
        if not variant.available:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff_price += variant.price - item.price  # not rounded (upstream)
    method = _get_payment_method(db, order.user_id, payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff_price:
        raise ValueError("Insufficient gift card balance to pay for the new item")
    _touch_order_and_user(db, order)
    order.payment_history.append(
        OrderPayment(
            transaction_type="payment" if diff_price > 0 else "refund",
            amount=abs(diff_price),
            payment_method_id=payment_method_id,
        )
    )
    if isinstance(method, GiftCard):
        method.balance -= diff_price
        method.balance = round(method.balance, 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = next(item for item in order.items if item.item_id == item_id)
        item.item_id = new_item_id
        # Upstream bug kept for hash parity: every modified item gets the LAST validated variant's price/options.
        assert variant is not None
        item.price = variant.price
        item.options = variant.options
    order.status = "pending (item modified)"
    return order


@tool(kind="write")
def modify_pending_order_payment(db: RetailDB, order_id: str, payment_method_id: str) -> Order:
    """Modify the payment method of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        payment_method_id: The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.
    """
    order = _get_order(db, order_id)
    if not _is_pending_order(order):
        raise ValueError("Non-pending order cannot be modified")
    method = _get_payment_method(db, order.user_id, payment_method_id)
    if len(order.payment_history) != 1 or order.payment_history[0].transaction_type != "payment":
        raise ValueError("There should be exactly one payment for a pending order")
    if order.payment_history[0].payment_method_id == payment_method_id:
        raise ValueError("The new payment method should be different from the current one")
    amount = order.payment_history[0].amount
    if isinstance(method, GiftCard) and method.balance < amount:
        raise ValueError("Insufficient gift card balance to pay for the order")
    _touch_order_and_user(db, order)
    old_method_id = order.payment_history[0].payment_method_id
    order.payment_history.extend(
        [
            OrderPayment(transaction_type="payment", amount=amount, payment_method_id=payment_method_id),
            OrderPayment(transaction_type="refund", amount=amount, payment_method_id=old_method_id),
        ]
    )
    if isinstance(method, GiftCard):
        method.balance -= amount
        method.balance = round(method.balance, 2)
    old_method = _get_payment_method(db, order.user_id, old_method_id)
    if isinstance(old_method, GiftCard):
        old_method.balance += amount
        old_method.balance = round(old_method.balance, 2)
    return order


@tool(kind="write")
def modify_user_address(
    db: RetailDB, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> User:
    """Modify the default address of a user. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
        address1: The first line of the address, such as '123 Main St'.
        address2: The second line of the address, such as 'Apt 1' or ''.
        city: The city, such as 'San Francisco'.
        state: The state, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The zip code, such as '12345'.
    """
    user = _get_user(db, user_id)
    address = UserAddress(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip)
    db.touch(db.users, user.user_id)
    user.address = address
    return user


@tool(kind="write")
def return_delivered_order_items(db: RetailDB, order_id: str, item_ids: list[str], payment_method_id: str) -> Order:
    """Return some items of a delivered order.

    The order status will be changed to 'return requested'.
    The agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to proceed.
    The user will receive follow-up email for how and where to return the item.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        item_ids: The item ids to be returned, each such as '1008292230'. There could be duplicate items in the list.
        payment_method_id: The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'.
            These can be looked up from the user or order details.
    """
    order = _get_order(db, order_id)
    if order.status != "delivered":
        raise ValueError("Non-delivered order cannot be returned")
    user = _get_user(db, order.user_id)
    method = _get_payment_method(db, user.user_id, payment_method_id)
    if not isinstance(method, GiftCard) and payment_method_id != order.payment_history[0].payment_method_id:
        raise ValueError("Payment method should be the original payment method")
    all_item_ids = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > all_item_ids.count(item_id):
            raise ValueError("Some item not found")
    db.touch(db.orders, order.order_id)
    order.status = "return requested"
    order.return_items = sorted(item_ids)
    order.return_payment_method_id = payment_method_id
    return order


RETAIL_TOOLS = Tau2Toolset(
    [
        calculate,
        cancel_pending_order,
        exchange_delivered_order_items,
        find_user_id_by_name_zip,
        find_user_id_by_email,
        get_order_details,
        get_product_details,
        get_item_details,
        get_user_details,
        list_all_product_types,
        modify_pending_order_address,
        modify_pending_order_items,
        modify_pending_order_payment,
        modify_user_address,
        return_delivered_order_items,
        transfer_to_human_agents,
    ],
    owner=OWNER,
)
"""The retail toolset in upstream's order (what the agent sees)."""
