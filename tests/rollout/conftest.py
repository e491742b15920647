"""Shared pieces of the rollout tests (the fake agent is ``trace_envs.llm.fake_server.order_cancel_agent``)."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

ENV_ID = "trace/order-cancel-v0"
