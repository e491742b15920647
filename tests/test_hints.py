"""Capability hints: every shipped hint is guidance only (no tool or argument names), and the checker catches leaks."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from trace_envs.core import CapabilityEnv
from trace_envs.training.hints import HINT_OPEN, hint_leaks, with_hint

SHIPPED = sorted(
    env_id
    for env_id, spec in gym.registry.items()
    if env_id.startswith("trace/") and str(spec.entry_point).startswith("generated_envs.")
)


def _env(env_id: str) -> CapabilityEnv:
    env = gym.make(env_id, disable_env_checker=True).unwrapped
    assert isinstance(env, CapabilityEnv)
    return env


def test_every_shipped_capability_has_a_hint() -> None:
    assert len(SHIPPED) >= 7
    missing = [env_id for env_id in SHIPPED if not _env(env_id).capability.hint]
    assert not missing, f"shipped envs without a hint: {missing}"


@pytest.mark.parametrize("env_id", SHIPPED)
def test_shipped_hints_never_name_their_envs_tools_or_arguments(env_id: str) -> None:
    env = _env(env_id)
    assert env.capability.hint is not None
    assert hint_leaks(env.capability.hint, env.toolset) == []


def test_the_checker_catches_tool_and_argument_names() -> None:
    tools = _env("trace/order-cancel-v0").toolset
    assert hint_leaks("Call cancel_order once you are sure.", tools) == ["tool cancel_order"]
    assert hint_leaks("First get order details, then decide.", tools) == ["tool get_order_details"]
    assert hint_leaks("Pass the order_id you were given.", tools) == ["argument order_id"]
    assert hint_leaks("Read the order and check the policy.", tools) == []
    device = _env("trace/permission-recovery-v0").toolset
    assert hint_leaks("Turn the service on when it is off.", device) == []  # 'on' as prose
    assert hint_leaks("Use on=true for the blocking service.", device) == ["argument on"]


def test_the_hint_prompt_keeps_the_base_prompt_and_adds_the_block() -> None:
    prompt = with_hint("You are a helpful agent.", "Check the policy first.")
    assert prompt.startswith("You are a helpful agent.\n\n" + HINT_OPEN)
    assert "Check the policy first." in prompt
