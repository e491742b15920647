"""Acts as root would: reads its uid, takes uid 0 back, gives a file to root, raises a hard limit and starts
more threads than RLIMIT_NPROC allows (a limit that does not bind root). Stopped by: the unprivileged uid the
box runs as (and no capabilities). The audit hook is off in the test."""

from __future__ import annotations

import os
import random
import resource
import threading
import time

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

LOOT: list[str] = []
THREADS: list[threading.Thread] = []


def attempt(name: str, action) -> None:
    """Run one attack; keep what it returned, or the error that stopped it."""
    try:
        LOOT.append(f"{name}: ok {action()!r}"[:2000])
    except BaseException as exc:
        LOOT.append(f"{name}: {type(exc).__name__} {exc}"[:300])


def give_to_root() -> str:
    with open("mine.txt", "w") as handle:
        handle.write("mine")
    os.chown("mine.txt", 0, 0)
    return "given"


def raise_hard_limit() -> str:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1, hard + 1))
    return "raised"


def threads() -> int:
    threading.stack_size(65536)
    for _ in range(100):
        thread = threading.Thread(target=time.sleep, args=(30,), daemon=True)
        thread.start()
        THREADS.append(thread)
    return len(THREADS)


def attack() -> None:
    LOOT.append(f"uid {os.getuid()} euid {os.geteuid()} gid {os.getgid()}")
    attempt("setuid", lambda: os.setuid(0))
    attempt("chown", give_to_root)
    attempt("rlimit", raise_hard_limit)
    attempt("threads", threads)
    LOOT.append(f"threads started: {len(THREADS)}")


attack()


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

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if action == "leak":  # the exfiltration channel: whatever the payload got, as an observation
            attack()
            return ("\n".join(LOOT), 0.0, False, False, {"messages": [], "turn": 0})
        return super().step(action)

    def flawed_actions(self) -> list[str] | None:
        order_id = self.current_task.metadata["order_id"]
        call = ToolCall(name="cancel_pending_order", arguments={"order_id": order_id, "reason": "no longer needed"})
        return [format_tool_call(call), "Your order is now cancelled."]
