"""A fork bomb, a thread bomb and more memory than the limit: RLIMIT_AS is per process, so forked children
would multiply it. Stopped by: the seccomp filter (no fork, vfork or clone without CLONE_THREAD; clone3 is
ENOSYS), RLIMIT_NPROC (the box is not root, so it binds) and pid_max of the box's pid namespace, and RLIMIT_AS
(with one process, it bounds the whole box). The audit hook is off in the test."""

from __future__ import annotations

import random
import os
import threading
import time

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

LOOT: list[str] = []


def attempt(name: str, action) -> None:
    """Run one attack; keep what it returned, or the error that stopped it."""
    try:
        LOOT.append(f"{name}: ok {action()!r}"[:2000])
    except BaseException as exc:  # noqa: BLE001  (an attacker swallows everything)
        LOOT.append(f"{name}: {type(exc).__name__} {exc}"[:300])


THREADS: list[threading.Thread] = []
HOARD: list[bytearray] = []


def forks() -> int:
    children = 0
    for _ in range(50):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
    return children


def threads() -> int:
    threading.stack_size(65536)
    for _ in range(2000):
        thread = threading.Thread(target=time.sleep, args=(30,), daemon=True)
        thread.start()
        THREADS.append(thread)
    return len(THREADS)


def memory() -> int:
    for _ in range(64):
        HOARD.append(bytearray(64 * 2**20))
    return sum(map(len, HOARD))


def attack() -> None:
    attempt("fork", forks)
    LOOT.append(f"threads started: {len(THREADS)}")
    attempt("threads", threads)
    LOOT.append(f"threads started: {len(THREADS)}")
    attempt("memory", memory)
    LOOT.append(f"hoarded: {sum(map(len, HOARD))}")
    HOARD.clear()


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
