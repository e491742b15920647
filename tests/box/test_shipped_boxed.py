"""Every shipped env, boxed, returns what it returns in-process: the reset and, step by step, the observation,
reward, endings and the whole ``info`` (messages, turn, verdict), so nothing the protocol leaves out or puts
back differs from what the env returned."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

from trace_envs.box import BoxedEnv
from trace_envs.core import STOP_TOKEN, CapabilityEnv, ToolCall, parse_action
from trace_envs.registry import box_installed_env, env_class, list_capability_envs


def shipped_env_ids() -> list[str]:
    """The shipped capability envs (the ``generated_envs`` plugin's; importing trace_envs registered them)."""
    return [i for i in list_capability_envs() if getattr(env_class(i), "__module__", "").startswith("generated_envs")]


def test_every_shipped_env_is_covered() -> None:
    assert len(shipped_env_ids()) >= 8


@pytest.mark.parametrize("env_id", shipped_env_ids())
def test_a_boxed_shipped_env_returns_what_it_returns_in_process_step_by_step(env_id: str, clean_ids: list[str]) -> None:
    boxed_id = box_installed_env(env_id)
    clean_ids.append(boxed_id)
    ours, theirs = gym.make(boxed_id).unwrapped, gym.make(env_id).unwrapped
    assert isinstance(ours, BoxedEnv) and isinstance(theirs, CapabilityEnv) and not isinstance(theirs, BoxedEnv)
    for seed in (0, 3):
        theirs.reset(seed=seed)
        oracle, flawed = theirs.oracle_actions(), theirs.flawed_actions() or []
        for actions in (oracle, [*flawed[:1], "not a tool call {", "What is the status?"]):
            assert ours.reset(seed=seed) == theirs.reset(seed=seed)
            for action in [*actions, STOP_TOKEN]:
                step, expected = ours.step(action), theirs.step(action)
                assert step == expected, f"{env_id} seed {seed}: {action[:60]!r}"
                if step[2] or step[3]:
                    break
            assert ours.messages == theirs.messages and ours.turn == theirs.turn and ours.ended == theirs.ended
    ours.close()


@pytest.mark.parametrize("env_id", shipped_env_ids())
def test_a_boxed_shipped_env_acts_on_tool_call_objects_as_in_process(env_id: str, clean_ids: list[str]) -> None:
    """What the TRL bridge and scripted policies pass, ``ToolCall`` objects, dicts and lists of calls (and junk
    that is no action at all), reaches the box as the same action: every step returns what the in-process env
    returns (a box that read ``str(ToolCall(...))`` took it for a message to the user)."""
    boxed_id = box_installed_env(env_id)
    clean_ids.append(boxed_id)
    ours, theirs = gym.make(boxed_id).unwrapped, gym.make(env_id).unwrapped
    theirs.reset(seed=5)
    calls = [c for action in theirs.oracle_actions() for c in parse_action(action).tool_calls]
    assert calls, f"{env_id}: the reference solution of seed 5 calls no tool"
    forms: list[list[Any]] = [
        [ToolCall(name=c.name, arguments=c.arguments) for c in calls],
        [{"name": c.name, "arguments": c.arguments, "id": f"call-{i}"} for i, c in enumerate(calls)],
        [[calls[0], {"function": {"name": calls[0].name, "arguments": json.dumps(calls[0].arguments)}}], 7, {}],
    ]
    for actions in forms:
        assert ours.reset(seed=5) == theirs.reset(seed=5)
        for action in [*actions, STOP_TOKEN]:
            step, expected = ours.step(action), theirs.step(action)
            assert step == expected, f"{env_id}: {action!r}"
            if step[2] or step[3]:
                break
        assert ours.messages == theirs.messages
    ours.close()
