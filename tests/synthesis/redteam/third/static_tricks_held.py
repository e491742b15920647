"""The static gate's refusals that hold (written by an LLM helper acting as attacker): the tricks an attacker
tries first to reach the interpreter past an AST check, each on a line of its own (marked): frames through a generator, a
coroutine and a traceback, ``__subclasses__``, ``compile``, a full-width ``ｅｘｅｃ`` (NFKC makes it ``exec``), a
class built by ``type``, ``__init_subclass__``, a format field that walks attributes, ``getattr`` with a literal
frame attribute, ``vars()`` and ``breakpoint``. Every one must be refused on its own line."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Task, ToolCall, UserFact, UserScript, format_tool_call
from trace_envs.domains.retail import RETAIL, generate_retail_db

REASONS = ("no longer needed", "ordered by mistake")

_gen = (_ for _ in ())
_b1 = _gen.gi_frame.f_back  # payload


async def _coro() -> None:
    return None


_b2 = _coro().cr_frame.f_globals  # payload
try:
    _ = 1 / 0
except ZeroDivisionError as _error:
    _b3 = _error.__traceback__.tb_frame  # payload
_b4 = ().__class__.__base__.__subclasses__()  # payload
_b5 = compile("1", "x", "eval")  # payload
_b6 = ｅｘｅｃ  # payload
_b7 = type("Made", (), {})  # payload


class _Hooked:
    def __init_subclass__(cls) -> None:  # payload
        return None


_b8 = "{0.gi_frame}".format(_gen)  # payload
_b9 = getattr(_gen, "gi_frame")  # payload
_b10 = vars()  # payload
_b11 = breakpoint  # payload


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
