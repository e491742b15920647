"""Fixtures for client tests: a fake wire-format server and a tiny offline Qwen3 model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest

os.environ.setdefault("OMP_NUM_THREADS", "1")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order_details",
            "description": "Get an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    }
]
MESSAGES = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Cancel order #W1."}]


def stop_responder(request: FakeRequest) -> FakeReply:
    return FakeReply(content="Done. ###STOP###")


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(stop_responder) as fake:
        yield fake


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    pytest.importorskip("trl")
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen3"), seed=0)
