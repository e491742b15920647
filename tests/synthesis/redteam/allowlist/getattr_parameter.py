"""A parameter named getattr in one helper used to switch the computed-getattr rule off for the whole module
(the gate pooled every bound name): the module-level getattr with a computed name then went unchecked.
Stopped by: static_policy (names resolve per scope; binding getattr is refused)."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript
from trace_envs.domains.retail import RETAIL, generate_retail_db


def _first(values, getattr=len):  # payload
    return values[: getattr(values)]  # payload


OPEN = getattr(RETAIL, "_" + "_class_" + "_")  # payload


class CancelEnv(CapabilityEnv):
    capability = Capability(name="precondition_verification", description="Check the policy before acting.")
    domain = RETAIL
    tool_names = ("get_order_details", "cancel_pending_order")
    max_turns = 10

    def generate(self, rng: random.Random) -> Task:
        db = generate_retail_db(rng, users=3, products=4)
        order = db.orders[rng.choice(sorted(db.orders))]
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order.order_id})
        solution: list[ToolCall | str] = [lookup, f"The order is {order.status}."]
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal="Cancel the order if the policy allows it.",
            user=UserScript(opening=f"Please cancel my order {order.order_id}."),
            solution=solution,
            required_facts=[order.status],
            metadata={"order_id": order.order_id},
        )
