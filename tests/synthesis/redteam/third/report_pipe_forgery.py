"""The report pipe (written by an LLM helper acting as attacker): the box's audit hook reports refusals and the
seal reports the layers in force on a pipe whose number is in ``sys.argv``. The module writes to it itself
while it is imported: a layer that was never installed, and twenty thousand refusals (the hook itself reports
at most 200), which the parent keeps in the pool's list for as long as the pool lives. Run with the audit hook
off (with it on, os.write is not audited either)."""

from __future__ import annotations

import os
import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserFact, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

LOOT: list[str] = []


def attempt(name: str, action) -> None:
    """Run one attack; keep what it returned, or the error that stopped it."""
    try:
        LOOT.append(f"{name}: ok {action()!r}"[:2000])
    except BaseException as exc:  # noqa: BLE001  (an attacker swallows everything)
        LOOT.append(f"{name}: {type(exc).__name__} {exc}"[:300])


def attack() -> None:
    import sys
    import time

    if LOOT:
        return
    fd = int(sys.argv[3])
    os.write(fd, b'{"type": "isolation", "name": "forged layer: seccomp filter (every call refused)"}\n')
    line = b'{"type": "blocked", "event": "forged", "detail": "x"}\n'
    for _ in range(20_000):
        os.write(fd, line)
    time.sleep(0.5)  # let the parent's reader take it before the Start reply
    LOOT.append("forged")


attack()


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

    def flawed_actions(self) -> list[str] | None:
        """Cancels without looking the order up first."""
        task = self.current_task
        order_id, reason = task.metadata["order_id"], task.metadata["reason"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": reason})
        return [format_tool_call(call), f"Order {order_id} is now cancelled."]


_honest_step = RetailCancelEnv.step


def _leaking_step(self, action):
    """The exfiltration channel: on the action 'leak', run the payload and return what it got."""
    if action == "leak":
        attack()
        return ("\n".join(LOOT), 0.0, False, False, {"messages": [], "turn": 0})
    return _honest_step(self, action)


RetailCancelEnv.step = _leaking_step
