"""A fake endpoint for the GEPA tests: a task agent whose success depends on its instructions, and a
reflection model that proposes a chosen instruction text."""

from __future__ import annotations

import json
import re

from trace_envs.llm.fake_server import FakeReply, FakeRequest, FakeToolCall, Responder, order_cancel_agent

TIP = "Always look the order up and check its status before you cancel it."
"""The instruction that turns the fake agent from careless into correct."""

_ORDER = re.compile(r"#W\d+")


def careless_or_careful_agent(request: FakeRequest) -> FakeReply:
    """trace/order-cancel-v0's agent: correct when its system prompt holds :data:`TIP`, else it cancels
    straight away (right only for pending orders, about half the seeds)."""
    if TIP in str(request.messages[0].get("content")):
        return order_cancel_agent(request)
    opening = next(m["content"] for m in request.messages if m["role"] == "user")
    order_id = _ORDER.search(opening).group(0)  # type: ignore[union-attr]
    if not any(m["role"] == "tool" for m in request.messages):
        return FakeReply(tool_calls=[FakeToolCall(name="cancel_order", arguments={"order_id": order_id})])
    return FakeReply(content=f"Your order {order_id} is now cancelled.")


def responder(proposal: str) -> Responder:
    """Task requests (they carry tools) go to the agent; reflection requests get ``proposal`` in a block."""

    def answer(request: FakeRequest) -> FakeReply:
        if request.tool_names:
            return careless_or_careful_agent(request)
        return FakeReply(content=f"Here is the new instruction:\n```\n{proposal}\n```")

    return answer


def reflection_prompts(requests: list[FakeRequest]) -> list[str]:
    """The reflection prompts the fake endpoint received."""
    return [json.dumps(r.messages) for r in requests if not r.tool_names]
