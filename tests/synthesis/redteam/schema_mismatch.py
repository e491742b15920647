"""Redefines get_order_details with its own argument name. Stopped by: static_policy (``@tool`` is a domain
builder outside the kit); where that import is trusted, by contract (schema mismatch)."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Domain, Task, ToolCall, ToolError, Toolset, UserScript
from trace_envs.domains.tools import tool
from trace_envs.domains.retail import RETAIL, RetailDB, generate_retail_db


@tool(kind="read")
def get_order_details(db: RetailDB, order_number: str) -> dict:
    """Get an order.

    Args:
        order_number: The order number.
    """
    if order_number not in db.orders:
        raise ToolError("Order not found")
    return db.orders[order_number].model_dump()


SHOP = Domain("retail", RetailDB, Toolset([get_order_details]), RETAIL.policy)


class LookupEnv(CapabilityEnv):
    capability = Capability(name="precondition_verification", description="Check the policy before acting.")
    domain = SHOP
    max_turns = 10

    def generate(self, rng: random.Random) -> Task:
        db = generate_retail_db(rng, users=3, products=4)
        order = db.orders[rng.choice(sorted(db.orders))]
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal="Tell the user the order status.",
            user=UserScript(opening=f"What is the status of {order.order_id}?"),
            solution=[ToolCall(name="get_order_details", arguments={"order_number": order.order_id}), order.status],
            required_facts=[order.status],
        )
