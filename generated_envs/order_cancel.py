"""Starter env: cancel an order only when the policy allows it; the guide shows it whole.

Capability: precondition_verification — check that a state-changing request is allowed before acting.
Domain: toy_shop — two tools (get_order_details, cancel_order) over a shop of a few orders.
Task kinds: cancel: the user asks to cancel one order, pending (allowed) or processed/delivered (refused).
Knobs: distractor_orders (default 3): other orders in the shop's state; lookup_required (default False): a
cancellation needs the order's lookup *before* it, so acting without the check fails on every seed (the learning
benchmark's variant: by default cancelling at once pays on every pending order, and the lookup earns nothing
there; a lookup made after cancelling checks nothing, so it does not count).
Verifier: the gold state hash (the order cancelled only when pending) and the fact "cancelled" or the
order's status; a refusal also needs the get_order_details read of that order, and no message may name a
shipped status the order does not have (so listing every status word does not pay).
Failure it targets: acting on a request without checking its precondition (cancelling a shipped order).
Example: seed 0, Zoe Garcia asks to cancel #W7463343; the reference looks it up, sees "delivered" and
refuses; the flawed solution cancels straight away, so the state hash differs.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import Capability, CapabilityEnv, Plan, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.toy_shop import TOY_SHOP, Order, OrderStatus, ShopState

ITEMS = ["desk lamp", "water bottle", "backpack", "keyboard", "yoga mat", "tea kettle", "headphones"]
NAMES = ["Ava Lee", "Noah Kim", "Mia Patel", "Liam Chen", "Zoe Garcia", "Omar Haddad"]


class OrderCancelKnobs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    distractor_orders: int = Field(default=3, ge=0, le=50, description="Other orders in the shop's state.")
    lookup_required: bool = Field(
        default=False,
        description="A cancellation needs the order's lookup before it: acting without the check (or checking "
        "after acting) fails on every seed.",
    )


class OrderCancelEnv(CapabilityEnv[OrderCancelKnobs]):
    """The user asks to cancel an order; about half the seeds make it ineligible. A refusal must
    come after looking the order up and give its status."""

    capability = Capability(
        name="precondition_verification",
        description="Check that a state-changing request is allowed by policy before acting, and refuse when it is not.",
        hint=(
            "Before changing anything, look up the record the user is asking about and compare its current status"
            " with what the policy allows. Act only when every condition holds; otherwise tell the user which "
            "rule prevents the change and leave everything as it is."
        ),
    )
    domain = TOY_SHOP
    max_turns = 12

    def generate(self, rng: random.Random) -> Task:
        ids = rng.sample(range(1_000_000, 10_000_000), self.knobs.distractor_orders + 1)
        statuses: list[OrderStatus] = ["pending", "processed", "delivered"]
        orders = {
            f"#W{i}": Order(
                order_id=f"#W{i}", user_name=rng.choice(NAMES), item=rng.choice(ITEMS), status=rng.choice(statuses)
            )
            for i in ids
        }
        target = orders[f"#W{ids[0]}"]
        target.status = "pending" if rng.random() < 0.5 else rng.choice(["processed", "delivered"])
        order_id, status = target.order_id, target.status
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order_id})
        plan = Plan(TOY_SHOP, ShopState(orders=orders))  # records the state, then runs the real tools on it
        plan.call(lookup.name, **lookup.arguments)
        if status == "pending":
            plan.call("cancel_order", order_id=order_id)
            plan.say(f"Your order {order_id} ({target.item}) is now cancelled.")
        else:
            plan.say(f"I'm sorry, order {order_id} is already {status}, so it cannot be cancelled.")
        return plan.task(
            goal=f"Cancel order {order_id} if the policy allows it.",
            user=UserScript(
                opening=f"Hi, I'm {target.user_name}. Please cancel my order {order_id}, the {target.item}.",
                facts=[UserFact(keys=["order id", "order number"], answer=f"It's {order_id}.")],
            ),
            required_facts=["cancelled" if status == "pending" else status],
            # a refusal that lists every status (or a confirmation that calls the order shipped) contradicts itself
            forbidden_facts=[other for other in ("processed", "delivered") if other != status],
            # the status is one of two: without the lookup, "already delivered" would pay
            required_reads=[] if status == "pending" and not self.knobs.lookup_required else [lookup],
            reads_before=["cancel_order"] if self.knobs.lookup_required else [],  # looking after acting checks nothing
            flawed_solution=[  # cancels straight away, without looking the order up
                ToolCall(name="cancel_order", arguments={"order_id": order_id}),
                f"Your order {order_id} is now cancelled.",
            ],
            metadata={"order_id": order_id, "eligible": status == "pending", "status": status},
        )
