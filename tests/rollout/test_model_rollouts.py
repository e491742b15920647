"""Rollouts with model-backed policies, offline: the Anthropic and OpenAI SDKs against a local
wire-format server, and the transformers client on a tiny model built by the test. Plus the LLM user."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401
from trace_envs.llm import make_chat_model
from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest, order_cancel_agent
from trace_envs.llm_user import LLMUser
from trace_envs.rollout import (
    ChatPolicy,
    TrajectoryStore,
    load_episodes,
    make_jobs,
    make_policy,
    run_episode,
    run_rollouts,
)

from .conftest import ENV_ID

pytest.importorskip("anthropic")
pytest.importorskip("openai")


def model_spec(server: FakeModelServer, wire: str) -> tuple[str, dict[str, Any]]:
    if wire == "anthropic":
        return "anthropic:claude-sonnet-4-6", {"base_url": server.url, "api_key": "k"}
    return f"openai:{server.openai_url}#agent-model", {}


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_wire_model_solves_order_cancel(wire: str, tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    with FakeModelServer(order_cancel_agent) as server:
        spec, options = model_spec(server, wire)
        with TrajectoryStore(path) as store:
            summary = run_rollouts(
                make_jobs([ENV_ID], range(6)), spec, store=store, concurrency=3, model_options=options
            )
        assert summary.episodes == 6 and summary.failed == 0 and summary.pass_rate == 1.0
        assert summary.usage.input_tokens > 0
        records = load_episodes(path)
        for record in records:
            assert record.model == record.policy and record.policy.startswith(wire)
            assert record.usage.input_tokens > 0 and record.usage.output_tokens > 0
            assert record.tool_calls[0].name == "get_order_details" and not record.tool_calls[0].error
        assert len(server.requests) == sum(r.num_steps for r in records)
        # the model saw the env's transcript: system prompt, opening, its own calls and their results
        last = server.requests[-1].messages
        assert last[0]["role"] == "system" and "<policy>" in last[0]["content"] and last[-1]["role"] == "tool"


def test_cache_makes_a_rerun_free(tmp_path: Path) -> None:
    with FakeModelServer(order_cancel_agent) as server:
        spec = f"openai:{server.openai_url}#agent-model"
        options = {"cache_dir": str(tmp_path / "cache")}
        first: list[Any] = []
        second: list[Any] = []
        run_rollouts(make_jobs([ENV_ID], range(4)), spec, model_options=options, on_episode=first.append)
        calls = len(server.requests)
        run_rollouts(make_jobs([ENV_ID], range(4)), spec, model_options=options, on_episode=second.append)
        assert len(server.requests) == calls  # every answer came from the cache
    assert sorted((r.seed, r.messages) for r in first) == sorted((r.seed, r.messages) for r in second)


def test_repeated_samples_are_not_served_from_one_cache_entry(tmp_path: Path) -> None:
    with FakeModelServer(order_cancel_agent) as server:
        spec = f"openai:{server.openai_url}#agent-model"
        options = {"cache_dir": str(tmp_path / "cache")}
        records: list[Any] = []
        run_rollouts(make_jobs([ENV_ID], [0], samples=3), spec, model_options=options, on_episode=records.append)
        assert len(server.requests) == sum(r.num_steps for r in records)  # every sample asked the model
        again: list[Any] = []
        run_rollouts(make_jobs([ENV_ID], [0], samples=3), spec, model_options=options, on_episode=again.append)
        assert len(server.requests) == sum(r.num_steps for r in records)  # and each sample has its cache entry
    assert sorted(r.sample for r in records) == [0, 1, 2]


def test_malformed_model_output_is_an_error_observation() -> None:
    def sloppy(request: FakeRequest) -> FakeReply:
        if len([m for m in request.messages if m["role"] == "assistant"]) == 0:
            return FakeReply(content='<tool_call>{"name": "get_order_details", "arguments": {</tool_call>')
        return FakeReply(content="###STOP###")

    with FakeModelServer(sloppy) as server:
        policy = make_policy(f"openai:{server.openai_url}#m")
        record = run_episode(gym.make(ENV_ID), policy, env_id=ENV_ID, seed=0)
    assert record.error is None and record.ended == "agent_stop"
    assert any(m.get("error") and "invalid tool call" in m["content"] for m in record.messages)


@pytest.mark.train
def test_hf_tiny_model_rollout(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from trace_envs.llm.tiny_model import build_tiny_model

    model_dir = build_tiny_model(tmp_path / "tiny", seed=0)
    path = tmp_path / "hf.jsonl"
    with TrajectoryStore(path) as store:
        summary = run_rollouts(
            make_jobs([ENV_ID], range(2)),
            f"hf:{model_dir}",
            store=store,
            concurrency=2,
            max_steps=3,
            sampling={"max_tokens": 8},
            model_options={"device": "cpu"},
        )
    assert summary.episodes == 2 and summary.failed == 0
    records = load_episodes(path)
    assert {r.policy for r in records} == {f"hf:{model_dir}"}
    assert all(1 <= r.num_steps <= 3 and r.usage.output_tokens > 0 for r in records)
    assert all(0.0 <= r.reward <= 1.0 for r in records)


def test_llm_user_plays_the_customer() -> None:
    with FakeModelServer(order_cancel_agent) as server:
        model = make_chat_model(f"openai:{server.openai_url}#user-model")
        env = gym.make(ENV_ID, user_model=model)
        agent = ChatPolicy(make_chat_model(f"openai:{server.openai_url}#agent-model"))
        record = run_episode(env, agent, env_id=ENV_ID, seed=1)
        user_requests = [r for r in server.requests if r.body["model"] == "user-model"]
    assert record.error is None
    order_id = env.unwrapped.task.metadata["order_id"]
    assert record.messages[1] == {"role": "user", "content": f"Hi, please cancel my order {order_id}."}
    assert record.success
    assert record.user_model == f"openai:{server.openai_url}#user-model"
    assert record.user_usage.input_tokens > 0
    system = user_requests[0].messages[0]["content"]
    assert "customer" in system and "###STOP###" in system and "Your goal:" in system
    assert user_requests[0].messages[1] == {"role": "user", "content": "Hi! How can I help you today?"}
    assert isinstance(env.unwrapped.user, LLMUser) and env.unwrapped.user.done


def test_llm_user_through_the_batch_runner() -> None:
    with FakeModelServer(order_cancel_agent) as server:
        user = make_chat_model(f"openai:{server.openai_url}#user-model")
        summary = run_rollouts(
            make_jobs([ENV_ID], range(3)), f"openai:{server.openai_url}#agent-model", user_model=user, concurrency=3
        )
    assert summary.episodes == 3 and summary.failed == 0
