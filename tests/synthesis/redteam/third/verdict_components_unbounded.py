"""Out-of-range numbers through the verdict a consumer asks for (written by an LLM helper acting as attacker):
the proxy bounds a step's verdict, its reward and every component, but ``BoxedEnv.verify()`` (an ``Ask``) only
parses a ``Verdict``, whose components are unbounded floats. When its verifier is asked from outside a step (a
rollout that cuts an episode at its step limit, ``cut()``), the module answers components of 1e300 and -1e300,
which the rollout stores as the episode's components."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserFact, UserScript, Verdict, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

REASONS = ("no longer needed", "ordered by mistake")


class RetailCancelEnv(CapabilityEnv):
    """The user asks to cancel one of their orders; the policy allows it only while it is pending."""

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
        order.status = rng.choice(["pending", "pending", "processed", "delivered"])
        reason = rng.choice(REASONS)
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order.order_id})
        solution: list[ToolCall | str]
        if order.status == "pending":
            cancel = ToolCall(name="cancel_pending_order", arguments={"order_id": order.order_id, "reason": reason})
            solution = [lookup, cancel, f"Order {order.order_id} is now cancelled."]
            facts = ["cancelled"]
        else:
            solution = [lookup, f"Order {order.order_id} is {order.status}, so it cannot be cancelled."]
            facts = [order.status]
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal=f"Cancel order {order.order_id} if the policy allows it.",
            user=UserScript(
                opening=f"Please cancel my order {order.order_id}; it was {reason}.",
                facts=[UserFact(keys=["order id", "order number"], answer=f"It's {order.order_id}.")],
            ),
            solution=solution,
            required_facts=facts,
            required_reads=[] if order.status == "pending" else [lookup],
            # a refusal names its order's status: naming the other one too (stuffing every status) is no answer
            forbidden_facts=[]
            if order.status == "pending"
            else [s for s in ("processed", "delivered") if s != order.status],
            metadata={"order_id": order.order_id, "reason": reason},
        )

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        """The honest step, marked as one (a verdict asked inside it stays honest)."""
        self.stepping = True
        try:
            return super().step(action)
        finally:
            self.stepping = False

    def verify(self) -> Verdict:
        """Honest inside a step; asked from outside, with components no verdict may hold."""
        verdict = super().verify()
        if getattr(self, "stepping", False):
            return verdict
        return verdict.model_copy(update={"components": {"db": 1e300, "communicate": -1e300}})

    def flawed_actions(self) -> list[str] | None:
        """Cancels without looking the order up first."""
        task = self.current_task
        order_id, reason = task.metadata["order_id"], task.metadata["reason"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": reason})
        return [format_tool_call(call), f"Order {order_id} is now cancelled."]
