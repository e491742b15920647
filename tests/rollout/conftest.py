"""Shared pieces of the rollout tests: a fake endpoint that plays order-cancel's reference solution."""

from __future__ import annotations

import json
import os
import re

from trace_envs.core import ToolCall
from trace_envs.llm.fake_server import FakeReply, FakeRequest

os.environ.setdefault("OMP_NUM_THREADS", "1")

ENV_ID = "trace/order-cancel-v0"
_ORDER = re.compile(r"#W\d+")


def order_cancel_agent(request: FakeRequest) -> FakeReply:
    """Answers as a correct agent for trace/order-cancel-v0 would, reading only the conversation;
    requests without tools are the LLM user's and get a customer's answer."""
    if not request.tool_names:
        if len(request.messages) <= 2:
            scenario_order = _ORDER.search(request.messages[0]["content"])
            return FakeReply(content=f"Hi, please cancel my order {scenario_order.group(0)}.")  # type: ignore[union-attr]
        return FakeReply(content="Thanks, that's all. ###STOP###")
    opening = next(m["content"] for m in request.messages if m["role"] == "user")
    order_id = _ORDER.search(opening).group(0)  # type: ignore[union-attr]
    results = [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]
    if not results:
        return FakeReply(tool_calls=[ToolCall(name="get_order_details", arguments={"order_id": order_id})])
    status = results[-1]["status"]
    if status == "pending":
        return FakeReply(tool_calls=[ToolCall(name="cancel_order", arguments={"order_id": order_id})])
    if status == "cancelled":
        return FakeReply(content=f"Your order {order_id} is now cancelled.")
    return FakeReply(content=f"I'm sorry, order {order_id} is already {status}, so it cannot be cancelled.")
