"""Reads the benchmarks' own tasks from the trusted package the box runs on, found from the contract it imports:
the device target's test split (``trace_envs/targets/device/builtin.py``, its compiled twin, and an import of it),
and lists the targets' folder. A module that holds them can pay only the evaluation's tasks, or say their answers.
Stopped by: the box's file-system view, which reads only the package's kit (the audit hook is off in the test)."""

from __future__ import annotations

import glob
import importlib
import os
import random

import trace_envs.core
from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

LOOT: list[str] = []
KIT = trace_envs.core.__file__
TARGETS = os.path.join(os.path.dirname(os.path.dirname(KIT)), "targets")


def attempt(name: str, action) -> None:
    """Run one attack; keep what it returned, or the error that stopped it."""
    try:
        LOOT.append(f"{name}: ok {action()!r}"[:2000])
    except BaseException as exc:  # noqa: BLE001  (an attacker swallows everything)
        LOOT.append(f"{name}: {type(exc).__name__} {exc}"[:300])


def attack() -> None:
    attempt("test split", lambda: open(os.path.join(TARGETS, "device", "builtin.py")).read())
    compiled = os.path.join(TARGETS, "device", "__pycache__", "*")
    attempt("compiled split", lambda: [open(p, "rb").read() for p in glob.glob(compiled)])
    attempt("import split", lambda: importlib.import_module("trace_envs.targets.device.builtin").SPECS)
    attempt("list targets", lambda: os.listdir(os.path.join(TARGETS, "device")))
    attempt("kit", lambda: len(open(KIT).read()))


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
