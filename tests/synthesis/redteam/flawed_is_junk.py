"""Its 'flawed' solution is an empty message: it fails on every seed without touching the capability.
Passes every gate built so far; the capability check (not built yet) must stop it."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db


class CancelEnv(CapabilityEnv):
    capability = Capability(name="precondition_verification", description="Check the policy before acting.")
    domain = RETAIL
    tool_names = ("get_order_details", "cancel_pending_order")
    max_turns = 10

    def generate(self, rng: random.Random) -> Task:
        db = generate_retail_db(rng, users=3, products=4)
        order = db.orders[rng.choice(sorted(db.orders))]
        order.status = rng.choice(["pending", "processed", "delivered"])
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order.order_id})
        if order.status == "pending":
            cancel = ToolCall(
                name="cancel_pending_order", arguments={"order_id": order.order_id, "reason": "no longer needed"}
            )
            solution: list[ToolCall | str] = [lookup, cancel, "Your order is now cancelled."]
            facts = ["cancelled"]
        else:
            solution = [lookup, f"Sorry, the order is {order.status} and cannot be cancelled."]
            facts = [order.status]
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal="Cancel the order if the policy allows it.",
            user=UserScript(opening=f"Please cancel my order {order.order_id}."),
            solution=solution,
            required_facts=facts,
            required_reads=[] if order.status == "pending" else [lookup],
            forbidden_facts=[]
            if order.status == "pending"
            else [s for s in ("processed", "delivered") if s != order.status],
            metadata={"order_id": order.order_id},
        )

    def flawed_actions(self) -> list[str] | None:
        return [""]
