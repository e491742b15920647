"""A capability env built on the retail domain (generated data, no files) passes the property suite."""

from __future__ import annotations

import random

import gymnasium as gym

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserFact, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db
from trace_envs.testing import check_capability_env

ENV_ID = "tracetest/retail-cancel-reason-v0"


class RetailCancelReasonEnv(CapabilityEnv):
    """Cancel a pending order with the reason the user gives (one of the two the tool accepts)."""

    capability = Capability(
        name="retail_cancel_reason",
        description="Identify the user by email, check the order, and cancel it with the user's stated reason.",
    )
    domain = RETAIL
    max_turns = 12
    tool_names = ("find_user_id_by_email", "get_order_details", "cancel_pending_order", "transfer_to_human_agents")

    def generate(self, rng: random.Random) -> Task:
        db = generate_retail_db(rng, users=4, products=4, orders_per_user=(2, 3))
        pending = [o for o in db.orders.values() if o.status == "pending"]
        if not pending:  # keep the draw deterministic: make one pending
            pending = [next(iter(db.orders.values()))]
            pending[0].status = "pending"
            pending[0].fulfillments = []
        order = rng.choice(pending)
        user = db.users[order.user_id]
        reason = rng.choice(["no longer needed", "ordered by mistake"])
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal=f"Cancel order {order.order_id} because it was {reason}.",
            user=UserScript(
                opening=f"Hi, I'd like to cancel my order {order.order_id}.",
                facts=[
                    UserFact(keys=["email"], answer=f"My email is {user.email}."),
                    UserFact(keys=["reason", "why"], answer=f"The reason: {reason}."),
                ],
            ),
            solution=[
                ToolCall(name="find_user_id_by_email", arguments={"email": user.email}),
                ToolCall(name="get_order_details", arguments={"order_id": order.order_id}),
                ToolCall(name="cancel_pending_order", arguments={"order_id": order.order_id, "reason": reason}),
                f"Your order {order.order_id} is cancelled.",
            ],
            metadata={"reason": reason},
        )

    def flawed_actions(self) -> list[str]:
        task = self.current_task
        wrong = "ordered by mistake" if task.metadata["reason"] == "no longer needed" else "no longer needed"
        actions = []
        for step in task.solution:
            if isinstance(step, ToolCall) and step.name == "cancel_pending_order":
                step = step.model_copy(update={"arguments": {**step.arguments, "reason": wrong}})
            actions.append(format_tool_call(step) if isinstance(step, ToolCall) else step)
        return actions


def test_retail_capability_env_passes_the_property_suite() -> None:
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point=f"{__name__}:RetailCancelReasonEnv")
    report = check_capability_env(ENV_ID, seeds=range(6), fuzz_examples=15, subprocess=False)
    assert report.passed
