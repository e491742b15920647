"""Starter env: cancel an order only when the policy allows it (precondition verification).

A deliberately small, self-contained env (its own two-tool ``toy_shop`` domain) so the core
contract runs against something real before the target domains are in place.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import (
    Capability,
    CapabilityEnv,
    Domain,
    Task,
    ToolCall,
    ToolError,
    Toolset,
    UserFact,
    UserScript,
    tool,
)

OrderStatus = Literal["pending", "processed", "delivered", "cancelled"]


class Order(BaseModel):
    order_id: str
    user_name: str
    item: str
    status: OrderStatus


class ShopState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    orders: dict[str, Order] = Field(default_factory=dict)


@tool(kind="read")
def get_order_details(state: ShopState, order_id: str) -> Order:
    """Get the status and details of an order.

    Args:
        order_id: The order id, such as '#W1234567'.
    """
    if order_id not in state.orders:
        raise ToolError("Order not found")
    return state.orders[order_id]


@tool(kind="write")
def cancel_order(state: ShopState, order_id: str) -> Order:
    """Cancel an order. The tool does not check the policy: the agent must.

    Args:
        order_id: The order id, such as '#W1234567'.
    """
    if order_id not in state.orders:
        raise ToolError("Order not found")
    state.orders[order_id].status = "cancelled"
    return state.orders[order_id]


POLICY = (
    "You help customers of a small shop. Only orders whose status is 'pending' can be cancelled. "
    "Before cancelling, look the order up and check its status. If the order cannot be cancelled, "
    "do not cancel it: tell the user its current status."
)

TOY_SHOP = Domain("toy_shop", ShopState, Toolset([get_order_details, cancel_order]), POLICY)

_ITEMS = ["desk lamp", "water bottle", "backpack", "keyboard", "yoga mat", "tea kettle", "headphones"]
_NAMES = ["Ava Lee", "Noah Kim", "Mia Patel", "Liam Chen", "Zoe Garcia", "Omar Haddad"]


class OrderCancelKnobs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    distractor_orders: int = Field(default=3, ge=0, le=50, description="Other orders in the shop's state.")


class OrderCancelEnv(CapabilityEnv[OrderCancelKnobs]):
    """The user asks to cancel an order; about half the seeds make it ineligible."""

    capability = Capability(
        name="precondition_verification",
        description="Check that a state-changing request is allowed by policy before acting, and refuse when it is not.",
    )
    domain = TOY_SHOP
    max_turns = 12

    def generate(self, rng: random.Random) -> Task:
        knobs = self.knobs
        ids = rng.sample(range(1_000_000, 10_000_000), knobs.distractor_orders + 1)
        orders = {
            f"#W{i}": Order(
                order_id=f"#W{i}",
                user_name=rng.choice(_NAMES),
                item=rng.choice(_ITEMS),
                status=rng.choice(["pending", "processed", "delivered"]),
            )
            for i in ids
        }
        target = orders[f"#W{ids[0]}"]
        target.status = "pending" if rng.random() < 0.5 else rng.choice(["processed", "delivered"])
        lookup = ToolCall(name="get_order_details", arguments={"order_id": target.order_id})
        if target.status == "pending":
            solution: list[ToolCall | str] = [
                lookup,
                ToolCall(name="cancel_order", arguments={"order_id": target.order_id}),
                f"Your order {target.order_id} ({target.item}) is now cancelled.",
            ]
            facts = ["cancelled"]
        else:
            solution = [
                lookup,
                f"I'm sorry, order {target.order_id} is already {target.status}, so it cannot be cancelled.",
            ]
            facts = [target.status]
        return Task(
            task_id="",
            initial_state=ShopState(orders=orders).model_dump(mode="json"),
            goal=f"Cancel order {target.order_id} if the policy allows it.",
            user=UserScript(
                opening=f"Hi, I'm {target.user_name}. Please cancel my order {target.order_id}, the {target.item}.",
                facts=[UserFact(keys=["order id", "order number"], answer=f"It's {target.order_id}.")],
            ),
            solution=solution,
            flawed_solution=[  # cancels straight away, without looking the order up
                ToolCall(name="cancel_order", arguments={"order_id": target.order_id}),
                f"Your order {target.order_id} is now cancelled.",
            ],
            required_facts=facts,
            metadata={"order_id": target.order_id, "eligible": target.status == "pending", "status": target.status},
        )
