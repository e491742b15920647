"""``toy_shop``: a two-tool shop domain (look an order up, cancel it) for the starter env, examples and tests.

Small enough to read at a glance, and real: its ``cancel_order`` does not check the policy, so an agent
that cancels without looking the order up changes the state when the policy says it must not.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import Domain, ToolError, Toolset

from .tools import tool

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
