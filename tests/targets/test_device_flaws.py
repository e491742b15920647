"""Planted device-side deficits: ``flawed:permission_error_recovery`` / ``flawed:datetime_reasoning`` on the
device target fail exactly the built-in scenarios that need the capability, and the offline probes see it."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401 - registers trace/device-v0
from trace_envs.analysis import probe_labels
from trace_envs.domains.device.flaws import give_up_after_blocked_call
from trace_envs.registry.capabilities import flaw_rules
from trace_envs.rollout import make_policy, run_episode
from trace_envs.targets.device import builtin_scenarios
from trace_envs.targets.device.flaws import device_actions


def _reference(name: str) -> tuple[gym.Env, list[str]]:  # type: ignore[type-arg]
    env = gym.make("trace/device-v0", source="builtin", scenario=name, disable_env_checker=True)
    env.reset(seed=0)
    return env, env.unwrapped.oracle_actions()  # type: ignore[attr-defined]


@pytest.mark.parametrize("capability", sorted(flaw_rules("device")))
def test_a_device_deficit_fails_the_scenarios_that_need_it_and_only_those(capability: str) -> None:
    changed = 0
    for scenario in builtin_scenarios("all"):
        env, reference = _reference(scenario.name)
        flawed = run_episode(env, make_policy(f"flawed:{capability}"), env_id="trace/device-v0", seed=0)
        if device_actions(reference, [capability]) == reference:
            assert flawed.success, f"{scenario.name} needs no {capability} but failed"
            continue
        changed += 1
        assert not flawed.success, f"{scenario.name}: flawed:{capability} still succeeded"
        assert probe_labels(flawed)[capability].label == "LACKING", scenario.name
    assert changed >= 5


def test_giving_up_keeps_the_blocked_attempt_and_apologises() -> None:
    _, reference = _reference("turn_on_wifi_low_battery")
    flawed = give_up_after_blocked_call(reference)
    assert flawed[0] == reference[0] and len(flawed) == 2 and "could not" in flawed[1]
    assert give_up_after_blocked_call(["a message"]) == ["a message"]
