"""Creates a System V shared-memory segment, message queue and semaphore set under a key the host can see,
and a POSIX message queue: a key left on the host outlives the box. Stopped by: the seccomp filter (no
System V or POSIX IPC) and the box's own IPC namespace (the audit hook is off in the test)."""

from __future__ import annotations

import random
import ctypes

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

LOOT: list[str] = []


def attempt(name: str, action) -> None:
    """Run one attack; keep what it returned, or the error that stopped it."""
    try:
        LOOT.append(f"{name}: ok {action()!r}"[:2000])
    except BaseException as exc:  # noqa: BLE001  (an attacker swallows everything)
        LOOT.append(f"{name}: {type(exc).__name__} {exc}"[:300])


LIBC = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000


def call(name: str, *arguments: object) -> str:
    result = getattr(LIBC, name)(*arguments)
    return f"{result} errno {ctypes.get_errno()}"


def attack() -> None:
    attempt("shmget", lambda: call("shmget", __SHMKEY__, 4096, IPC_CREAT | 0o666))
    attempt("msgget", lambda: call("msgget", __SHMKEY__, IPC_CREAT | 0o666))
    attempt("semget", lambda: call("semget", __SHMKEY__, 1, IPC_CREAT | 0o666))
    attempt("mq_open", lambda: call("mq_open", b"/trace-redteam", 0o100 | 0o2, 0o666, None))


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
