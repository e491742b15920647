"""Retail parts of a compound request (the multi-step env): cancel, re-address, return, exchange, move house.

Each ``draw_*`` adds its order to a :class:`RetailRecords` with the task's ``rng`` and returns the
:data:`~trace_envs.domains.tau2_requests.Part` that carries it out on the task's plan: refunds, prices,
price differences and payment method ids come from what ``get_order_details`` and
``get_product_details`` return, never from the records the generator holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from trace_envs.core import Plan
from trace_envs.domains.retail.records import RetailRecords, address_arguments, describe_address
from trace_envs.domains.tau2_records import money
from trace_envs.domains.tau2_requests import Part, SubTask, finish_part

# ----- part texts: what the customer asks, what the agent confirms, the summary line ----------------------
USER_ADDRESS = (
    "please change the default address on my account to {said}",
    "I will set the default address of your account to {said}.",
    "your default address is now {said}",
)
CANCEL_ORDER = (
    "please cancel order {oid}, {why}",
    "I will cancel order {oid} (reason: {reason}) and refund {refund} to the original payment method.",
    "order {oid} is cancelled and {refund} will be refunded",
)
ORDER_ADDRESS = (
    "please ship order {oid} to {said} instead",
    "I will change the shipping address of order {oid} to {said}.",
    "order {oid} will ship to {said}",
)
RETURN_ITEM = (
    "please return the {name} from order {oid}, refunded to the original payment method",
    "I will request a return of the {name} (item {item_id}) from order {oid}, refunding {refund} to {original}.",
    "the return of the {name} from order {oid} is requested (instructions come by email)",
)
EXCHANGE_ITEM = (
    "please exchange the {name} in order {oid} for the same one with {option} {value}, settling any difference "
    "with the original payment method",
    "I will exchange the {name} (item {item_id}) in order {oid} for item {new_id} ({option} {value}); {settle} via "
    "{original}.",
    "the exchange of the {name} in order {oid} for the {option} {value} one is requested",
)


def draw_user_address(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> Part:
    """Change the account's default address (drawn at most once per task)."""
    new, uid = db.address(), user["user_id"]

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        plan.call("get_user_details", user_id=uid)
        write = ("modify_user_address", {"user_id": uid, **address_arguments(new)})
        return finish_part(plan, start, "user_address", USER_ADDRESS, write, said=describe_address(new))

    return run


def draw_cancel(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> Part:
    """Cancel a pending order with one of the two reasons the tool accepts; the refund is its payment."""
    oid = db.add_order(user, "pending")["order_id"]
    reason = rng.choice(("no longer needed", "ordered by mistake"))
    why = f"it was {reason}" if reason == "ordered by mistake" else "I no longer need it"

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        refund = money(plan.call("get_order_details", order_id=oid).payment_history[0].amount)
        write = ("cancel_pending_order", {"order_id": oid, "reason": reason})
        return finish_part(plan, start, "cancel", CANCEL_ORDER, write, oid=oid, why=why, reason=reason, refund=refund)

    return run


def draw_order_address(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> Part:
    """Ship a pending order to a new address."""
    oid = db.add_order(user, "pending")["order_id"]
    new = db.address()

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        plan.call("get_order_details", order_id=oid)
        write = ("modify_pending_order_address", {"order_id": oid, **address_arguments(new)})
        return finish_part(plan, start, "order_address", ORDER_ADDRESS, write, oid=oid, said=describe_address(new))

    return run


def draw_return(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> Part:
    """Return one item of a delivered order, refunded (its price) to the order's payment method."""
    order = db.add_order(user, "delivered")
    oid, item_id = order["order_id"], rng.choice(order["items"])["item_id"]

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        read = plan.call("get_order_details", order_id=oid)
        item = next(i for i in read.items if i.item_id == item_id)
        original = read.payment_history[0].payment_method_id
        write = (
            "return_delivered_order_items",
            {"order_id": oid, "item_ids": [item_id], "payment_method_id": original},
        )
        values = {"oid": oid, "name": item.name, "item_id": item_id, "original": original}
        return finish_part(plan, start, "return", RETURN_ITEM, write, refund=money(item.price), **values)

    return run


def draw_exchange(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> Part:
    """Exchange one delivered item for its sibling variant; the price difference settles on the order's method."""
    order = db.add_order(user, "delivered")
    oid, item = order["order_id"], rng.choice(order["items"])
    option, value, variant = db.sibling_variant(item)
    item_id, new_id = item["item_id"], variant["item_id"]

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        read = plan.call("get_order_details", order_id=oid)
        owned = next(i for i in read.items if i.item_id == item_id)
        new_price = plan.call("get_product_details", product_id=owned.product_id).variants[new_id].price
        original = read.payment_history[0].payment_method_id
        difference = round(new_price - owned.price, 2)
        settle = f"you pay {money(difference)}" if difference > 0 else f"you get {money(-difference)} back"
        swap = {"order_id": oid, "item_ids": [item_id], "new_item_ids": [new_id], "payment_method_id": original}
        values = {"oid": oid, "name": owned.name, "item_id": item_id, "original": original, "new_id": new_id}
        write = ("exchange_delivered_order_items", swap)
        return finish_part(
            plan, start, "exchange", EXCHANGE_ITEM, write, option=option, value=value, settle=settle, **values
        )

    return run


RETAIL_PARTS: dict[str, Callable[[random.Random, RetailRecords, dict[str, Any]], Part]] = {
    "cancel": draw_cancel,
    "order_address": draw_order_address,
    "return": draw_return,
    "exchange": draw_exchange,
    "user_address": draw_user_address,
}
"""Each retail part kind's draw."""
