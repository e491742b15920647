"""Every task is a refusal, and the verifier pays whoever names the order's status after looking it up: no
forbidden facts, so "look up, then list every status" wins every seed (issue 34). Stopped by: execution (the
gaming policy states every required fact of the other seeds played, and that is a message, not a tool call)."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserFact, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

REASONS = ("no longer needed", "ordered by mistake")


class RetailRefusalEnv(CapabilityEnv):
    """The user asks to cancel an order that is never pending; the agent must look it up and refuse."""

    capability = Capability(
        name="precondition_verification",
        description="Check that a state-changing request is allowed by policy before acting.",
    )
    domain = RETAIL
    tool_names = ("get_order_details", "cancel_pending_order")
    max_turns = 10

    def generate(self, rng: random.Random) -> Task:
        db = generate_retail_db(rng, users=3, products=4)
        order = db.orders[rng.choice(sorted(db.orders))]
        order.status = rng.choice(["processed", "delivered"])
        reason = rng.choice(REASONS)
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order.order_id})
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal=f"Cancel order {order.order_id} if the policy allows it.",
            user=UserScript(
                opening=f"Please cancel my order {order.order_id}; it was {reason}.",
                facts=[UserFact(keys=["order id", "order number"], answer=f"It's {order.order_id}.")],
            ),
            solution=[lookup, f"Order {order.order_id} is {order.status}, so it cannot be cancelled."],
            required_facts=[order.status],
            required_reads=[lookup],
            metadata={"order_id": order.order_id, "reason": reason},
        )

    def flawed_actions(self) -> list[str] | None:
        """Cancels without looking the order up first."""
        task = self.current_task
        order_id, reason = task.metadata["order_id"], task.metadata["reason"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": reason})
        return [format_tool_call(call), f"Order {order_id} is now cancelled."]
