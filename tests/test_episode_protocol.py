"""The typed episode protocol, checked on every registered env (capability envs and targets alike): every
transcript entry is a ``Message``, and the last step's ``info["verdict"]`` is one ``Verdict`` shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.core import Message, Role, ToolCallEntry, Verdict
from trace_envs.rollout import make_policy

from .targets.fake_models import ScriptedUserModel

TAU2_TARGETS = ("trace/tau2-retail-v0", "trace/tau2-airline-v0")
SEEDS = (0, 1)


def make_env(env_id: str, request: pytest.FixtureRequest) -> gym.Env[Any, Any]:
    """The env with what it needs: the tau2 targets get the shared data and a scripted model user."""
    if env_id in TAU2_TARGETS:
        data: Path = request.getfixturevalue("shared_data")
        user = ScriptedUserModel(["I need help with my reservation.", "Yes, please go ahead."])
        return gym.make(env_id, data_dir=str(data / "tau2"), user_model=user, disable_env_checker=True)
    return gym.make(env_id, disable_env_checker=True)


def check_message(message: dict[str, Any], where: str) -> None:
    assert message.get("role") in get_args(Role), f"{where}: role {message.get('role')!r}"
    unknown = set(message) - set(Message.__annotations__)
    assert not unknown, f"{where}: keys {sorted(unknown)} are not Message keys"
    for call in message.get("tool_calls") or []:
        assert set(call) == set(ToolCallEntry.__annotations__), f"{where}: tool call {call}"
        assert isinstance(call["arguments"], dict) and isinstance(call["id"], str) and call["id"], where


def play(env: gym.Env[Any, Any], spec: str, seed: int, env_id: str) -> dict[str, Any]:
    """Play a scripted policy to the end; check every message on the way; return the last info."""
    policy = make_policy(spec, seed=seed)
    observation, info = env.reset(seed=seed)
    for message in info["messages"]:
        check_message(message, f"{env_id} reset")
    policy.reset(env, observation, info)
    for turn in range(200):
        observation, _, terminated, truncated, info = env.step(policy.act(observation, info))
        for message in info["messages"]:
            check_message(message, f"{env_id} {spec} seed {seed} turn {turn}")
        if terminated or truncated:
            return info
    raise AssertionError(f"{env_id}: {spec} did not end in 200 turns")


@pytest.mark.parametrize("env_id", trace_envs.list_envs())
def test_every_env_speaks_messages_and_one_verdict_shape(env_id: str, request: pytest.FixtureRequest) -> None:
    env = make_env(env_id, request)
    for seed in SEEDS:
        for spec in ("oracle", "noop"):
            info = play(env, spec, seed, env_id)
            verdict = info["verdict"]
            assert set(verdict) == set(Verdict.model_fields), f"{env_id}: verdict keys {sorted(verdict)}"
            parsed = Verdict.model_validate(verdict)
            if spec == "oracle" or env_id not in TAU2_TARGETS:  # a read-only tau2 task passes with nothing done
                assert parsed.success == (spec == "oracle"), f"{env_id} {spec} seed {seed}: {verdict}"
            assert 0.0 <= parsed.reward <= 1.0 and all(isinstance(v, float) for v in parsed.components.values())
            assert "evaluation" not in info  # the verdict is the one place a score is reported
