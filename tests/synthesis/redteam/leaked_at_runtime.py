"""Copies an order id from the retail evaluation tasks into the text it generates, built at run time so that
no literal of the source holds it (the test puts the id, reversed, in place of the placeholder). Stopped by:
execution (the generated texts are scanned for the evaluation tasks)."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db


OTHER = "".join(reversed("__LEAKED_ID_REVERSED__"))


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
            user=UserScript(opening=f"Please cancel my order {order.order_id}, not {OTHER}."),
            solution=solution,
            required_facts=facts,
            metadata={"order_id": order.order_id},
        )

    def flawed_actions(self) -> list[str] | None:
        order_id = self.current_task.metadata["order_id"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": "no longer needed"})
        return [format_tool_call(call), "Your order is now cancelled."]
