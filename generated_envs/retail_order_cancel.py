"""Starter env on a real target: cancel a retail order only when the policy allows it; the guide shows it whole.

Capability: precondition_verification — check that a state-changing request is allowed before acting.
Domain: retail (tau2-bench) — three of its tools: find_user_id_by_email, get_order_details, cancel_pending_order;
it imports only the retail target's kit (trace_envs.core, trace_envs.domains.retail), so validate accepts it as is.
Task kinds: the customer asks to cancel one order, pending (allowed) or processed/delivered (refused).
Knobs: other_orders (default 2): the customer's other orders in the state.
Verifier: the gold state hash (the order cancelled only when pending) and the fact "cancelled" or the order's
status; a refusal also needs the get_order_details read, and no message may name a status the order lacks.
Failure it targets: cancelling without looking the order up (the write fails on an order already shipped).
Example: seed 0, Lucas Khan asks to cancel #W5898118; the reference finds his id, looks the order up, sees
"processed" and refuses; the flawed solution cancels straight away, the call fails and it says "cancelled".
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import Capability, CapabilityEnv, Plan, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail.records import RetailRecords

SHIPPED = ("processed", "delivered")
REASONS = ("no longer needed", "ordered by mistake")


class RetailCancelKnobs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    other_orders: int = Field(default=2, ge=0, le=10, description="The customer's other orders in the state.")


class RetailOrderCancelEnv(CapabilityEnv[RetailCancelKnobs]):
    """The customer asks to cancel an order; about half the seeds make it ineligible. A refusal must come
    after looking the order up and give its status."""

    capability = Capability(
        name="precondition_verification",
        description="Check that a state-changing request is allowed by policy before acting, and refuse when it is not.",
        hint="Look the order up and compare its status with the policy before cancelling; only pending orders can be.",
    )
    domain = RETAIL
    tool_names = ("find_user_id_by_email", "get_order_details", "cancel_pending_order")
    max_turns = 16

    def generate(self, rng: random.Random) -> Task:
        db = RetailRecords(rng)  # a catalogue, customers and orders in the retail db layout, drawn from rng
        user = db.add_user()
        for _ in range(self.knobs.other_orders):
            db.add_order(user, rng.choice(("pending", *SHIPPED)))
        status = "pending" if rng.random() < 0.5 else rng.choice(SHIPPED)
        order_id = db.add_order(user, status)["order_id"]
        reason, email = rng.choice(REASONS), user["email"]
        name = f"{user['name']['first_name']} {user['name']['last_name']}"
        plan = Plan(RETAIL, db.state())  # records the initial state, then runs the real tools on its own copy
        plan.call("find_user_id_by_email", email=email)
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order_id})
        plan.call(lookup.name, **lookup.arguments)
        cancel = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": reason})
        if status == "pending":
            plan.confirm(f"I can cancel order {order_id} (reason: {reason}) and refund it. Shall I proceed?")
            plan.call(cancel.name, **cancel.arguments)
            plan.say(f"Order {order_id} is now cancelled; the refund goes to the original payment method.")
        else:
            plan.say(f"I'm sorry, order {order_id} is already {status}; only pending orders can be cancelled.")
        return plan.task(
            goal=f"Cancel order {order_id} for {name} if the policy allows it.",
            user=UserScript(
                opening=f"Hi, I'm {name} (email {email}). Please cancel my order {order_id}: it was {reason}.",
                facts=[UserFact(keys=["email"], answer=f"My email is {email}.")],
            ),
            required_facts=["cancelled" if status == "pending" else status],
            forbidden_facts=[other for other in SHIPPED if other != status],  # listing every status does not pay
            required_reads=[] if status == "pending" else [lookup],  # a refusal rests on the lookup
            flawed_solution=[  # identifies the customer, then cancels without looking the order up
                plan.steps[0],
                cancel,
                f"Order {order_id} is now cancelled; the refund goes to the original payment method.",
            ],
            metadata={"order_id": order_id, "eligible": status == "pending", "status": status},
        )
