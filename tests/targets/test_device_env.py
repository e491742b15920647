"""``trace/device-v0`` passes the property suite; the trajectory log and the LLM user behave like ToolSandbox's."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import trace_envs  # noqa: F401  (registers trace/device-v0)
from trace_envs.core import STOP_TOKEN
from trace_envs.llm.base import ChatResponse
from trace_envs.targets.device import DeviceEnv
from trace_envs.testing import check_capability_env


def test_property_suite() -> None:
    report = check_capability_env("trace/device-v0", seeds=range(30), raise_on_failure=False)
    assert report.passed, [f"{r.name}: {r.message}" for r in report.failures()]


def test_builtin_source_draws_from_the_split() -> None:
    env = gym.make("trace/device-v0", source="builtin", split="test").unwrapped
    assert isinstance(env, DeviceEnv)
    names = set()
    for seed in range(12):
        env.reset(seed=seed)
        assert env.scenario is not None and env.scenario.split == "test"
        names.add(env.scenario.name)
    assert len(names) > 3


def test_sandbox_log_and_snapshots() -> None:
    env = DeviceEnv(scenario="turn_on_wifi_low_battery")
    env.reset(seed=0)
    for action in env.oracle_actions():
        env.step(action)
    senders = [(m.sender, m.recipient) for m in env.sandbox]
    assert senders[:3] == [("SYSTEM", "AGENT"), ("SYSTEM", "USER"), ("USER", "AGENT")]
    assert ("AGENT", "EXECUTION_ENVIRONMENT") in senders and senders[-1] == ("EXECUTION_ENVIRONMENT", "USER")
    call = next(m for m in env.sandbox if m.sender == "AGENT" and m.recipient == "EXECUTION_ENVIRONMENT")
    assert call.content is not None and "set_wifi_status(**" in call.content
    assert len(env.snapshots) == len(env.sandbox)
    assert env.snapshots[0]["SETTING"][0]["wifi"] is False and env.snapshots[-1]["SETTING"][0]["wifi"] is True
    assert env.sandbox[-1].conversation_active is False
    verdict = env.verify()
    assert verdict.reward == 1.0 and verdict.hash_match
    assert verdict.components["milestone_2_message"] > verdict.components["milestone_1_message"]


class ScriptedChatModel:
    """A stand-in ChatModel that answers from a list (records what it was sent)."""

    spec = "fake:user"

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        self.seen.append(messages)
        return ChatResponse(content=self.replies.pop(0))

    async def achat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self.chat(messages, tools, **sampling)


def test_llm_user() -> None:
    model = ScriptedChatModel(["Tomorrow at 8 AM.", STOP_TOKEN])
    env = DeviceEnv(scenario="remind_garden_ask_time", user_model=model)
    observation, _ = env.reset(seed=0)
    assert observation == env.scenario.user.opening  # type: ignore[union-attr]
    rewards = []
    for action in env.oracle_actions():
        _, reward, terminated, _, _ = env.step(action)
        rewards.append(reward)
        if terminated:
            break
    assert rewards[-1] == 1.0
    system = model.seen[0][0]
    assert system["role"] == "system" and "water the garden" in system["content"].lower()
    assert model.seen[0][-1] == {"role": "user", "content": "Sure. When should I remind you?"}


def test_parallel_calls_that_depend_on_order_fail_as_upstream() -> None:
    """[turn low battery off, turn wifi on] in one turn: the wifi-first order fails, so that order is played."""
    env = DeviceEnv(scenario="turn_on_wifi_low_battery")
    env.reset(seed=0)
    both = (
        '<tool_call>{"name": "set_low_battery_mode_status", "arguments": {"on": false}}</tool_call>'
        '<tool_call>{"name": "set_wifi_status", "arguments": {"on": true}}</tool_call>'
    )
    observation, *_ = env.step(both)
    assert observation.startswith("[set_wifi_status] PermissionError")
    assert env.state.settings.low_battery_mode is False and env.state.settings.wifi is False
    env.reset(seed=0)
    independent = (
        '<tool_call>{"name": "get_low_battery_mode_status", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "set_low_battery_mode_status", "arguments": {"on": false}}</tool_call>'
    )
    observation, *_ = env.step(independent)
    assert observation.startswith("[get_low_battery_mode_status] True")
