"""Phones home to a listener on 127.0.0.1. Stopped by: static_policy (import of socket); in the
sandbox: no network namespace route, and the audit hook refuses the socket."""

from __future__ import annotations

import random
import socket

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

try:
    with socket.create_connection(("127.0.0.1", __PORT__), timeout=2) as connection:
        connection.sendall(b"hello from the box")
except OSError:
    pass


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
            metadata={"order_id": order.order_id},
        )

    def flawed_actions(self) -> list[str] | None:
        order_id = self.current_task.metadata["order_id"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": "no longer needed"})
        return [format_tool_call(call), "Your order is now cancelled."]
