"""Floods its stdout and stderr from a thread that never stops, straight to the descriptors (no buffer), and
keeps writing after an error, through copies of the descriptors it made first and through ``/dev/stdout``: a box's
output went to host files outside the scratch quota (16 MiB each). Stopped by: the output pipes (the parent keeps
only their ends and closes each after ``BoxLimits.output_bytes``; a copy of a pipe's write end is the same pipe),
and Landlock (``/dev/stdout`` is outside the view). The audit hook is off in the test."""

from __future__ import annotations

import os
import random
import threading

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

LOOT: list[str] = []
WRITTEN = {"bytes": 0}
ERRORS: list[str] = []
CHUNK = b"flood " * 10_000 + b"\n"


def descriptors() -> list[int]:
    """stdout, stderr, a copy of each, and ``/dev/stdout`` if it opens."""
    fds = [1, 2]
    for fd in (1, 2):
        try:
            fds.append(os.dup(fd))
        except OSError as exc:
            ERRORS.append(f"dup {fd}: {exc}")
    try:
        fds.append(os.open("/dev/stdout", os.O_WRONLY))
    except OSError as exc:
        ERRORS.append(f"/dev/stdout: {type(exc).__name__}")
    return fds


def flood() -> None:
    fds = descriptors()
    while fds:
        for fd in list(fds):
            try:
                WRITTEN["bytes"] += os.write(fd, CHUNK)
            except OSError as exc:
                if len(ERRORS) < 20:
                    ERRORS.append(f"write {fd}: {type(exc).__name__} errno {exc.errno}")
                fds.remove(fd)


def attack() -> None:
    LOOT.append(f"written {WRITTEN['bytes']}; errors: {'; '.join(ERRORS)}")


threading.Thread(target=flood, daemon=True).start()


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
