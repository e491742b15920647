"""trace/permission-recovery-v0: fix the blocking setting and retry; reporting the error is caught."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.permission_recovery import SERVICES, SETTER, PermissionRecoveryEnv
from trace_envs.core import ToolCall, format_tool_call
from trace_envs.domains.device import DEVICE
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/permission-recovery-v0"
SEEDS = range(150)


def make(**knobs: Any) -> PermissionRecoveryEnv:
    env = gym.make(ENV_ID, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, PermissionRecoveryEnv)
    return env


def calls_of(env: PermissionRecoveryEnv) -> list[ToolCall]:
    return [s for s in env.current_task.solution if isinstance(s, ToolCall)]


def request_call(env: PermissionRecoveryEnv) -> ToolCall:
    """The user's request: the call that first fails (and is retried last)."""
    task = env.current_task
    step = task.solution[task.expected_errors[0]]
    assert isinstance(step, ToolCall)
    return step


@pytest.mark.parametrize("seed", [0, 7, 42])
def test_gym_make_with_seed(seed: int) -> None:
    env = gym.make(ENV_ID, seed=seed)
    observation, info = env.reset()
    assert info["capability"] == "permission_error_recovery"
    assert observation == gym.make(ENV_ID).reset(seed=seed)[0]


def test_property_suite_200_seeds() -> None:
    check_capability_env(ENV_ID, seeds=range(200))


def test_real_device_tools_and_state() -> None:
    env = make()
    _, info = env.reset(seed=3)
    assert env.domain is DEVICE
    reference = {s["function"]["name"]: s for s in DEVICE.toolset.schemas()}
    assert all(schema == reference[schema["function"]["name"]] for schema in info["tools"])
    assert type(env.state).__name__ == "DeviceState"


def test_every_task_starts_with_a_blocking_error_from_the_real_tool() -> None:
    env = make()
    kinds = set()
    for seed in SEEDS:
        env.reset(seed=seed)
        task = env.current_task
        kinds.add(task.metadata["kind"])
        actions = env.oracle_actions()
        first = task.expected_errors[0]
        results = [env.step(action)[0] for action in actions[: first + 1]]
        assert results[-1].startswith(("PermissionError:", "ConnectionError:")), (seed, results[-1])
        assert results[-1] == task.metadata["first_error"]
    assert kinds == {"turn_on", "send_message", "location", "weather"}


def test_reporting_the_permission_error_instead_of_fixing_it_is_caught() -> None:
    """Paper C1: the agent gets the PermissionError and tells the user instead of resolving it."""
    env = make()
    for seed in SEEDS:
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        assert flawed is not None
        assert "couldn't" in flawed[-1] and env.current_task.metadata["first_error"] in flawed[-1]
        reward, info = play_actions(env, flawed, seed=seed)
        assert reward == 0.0 and not info["verdict"]["hash_match"], seed


def test_fixing_the_setting_without_retrying_the_request_fails() -> None:
    """Settings fixed, request not retried: no message sent (hash), no location or temperature told (facts)."""
    env = make()
    for seed in SEEDS:
        env.reset(seed=seed)
        if env.current_task.metadata["kind"] == "turn_on":
            continue  # there the retry is the request itself
        actions = env.oracle_actions()
        last_call = max(i for i, s in enumerate(env.current_task.solution) if isinstance(s, ToolCall))
        told = "I changed the blocking settings (low battery mode, cellular, location, wifi); please try again."
        reward, info = play_actions(env, [*actions[:last_call], told], seed=seed)
        assert reward == 0.0, seed
        if env.current_task.metadata["kind"] == "send_message":
            assert not info["verdict"]["hash_match"]


def test_turning_every_service_on_is_a_shortcut_that_fails() -> None:
    """Low battery mode off and every service on, then the request: unneeded services must stay off."""
    env = make()
    for seed in SEEDS:
        env.reset(seed=seed)
        settings = env.state.settings
        actions = []
        if settings.low_battery_mode:
            actions.append(format_tool_call(ToolCall(name="set_low_battery_mode_status", arguments={"on": False})))
        actions += [
            format_tool_call(ToolCall(name=SETTER[s], arguments={"on": True}))
            for s in SERVICES
            if not getattr(settings, s)
        ]
        request = request_call(env)
        if request.name not in SETTER.values():
            actions.append(format_tool_call(request))
        actions.append(env.oracle_actions()[-1])
        reward, info = play_actions(env, actions, seed=seed)
        assert reward == 0.0 and not info["verdict"]["hash_match"], seed


def test_diagnosing_first_without_the_error_also_succeeds() -> None:
    """The verifier checks the outcome: an agent that reads the settings first and never hits the error scores 1."""
    env = make()
    for seed in SEEDS:
        env.reset(seed=seed)
        task = env.current_task
        skip = set(task.expected_errors)
        actions = [a for i, a in enumerate(env.oracle_actions()) if i not in skip]
        reward, info = play_actions(env, actions, seed=seed)
        assert reward == 1.0, (seed, info["verdict"])
        assert not any(m.get("error") for m in env.messages if m["role"] == "tool")


def test_the_blocker_count_is_the_number_of_settings_changed() -> None:
    for blockers in (1, 2, 3):
        env = make(min_blockers=blockers, max_blockers=blockers)
        for seed in range(40):
            env.reset(seed=seed)
            meta = env.current_task.metadata
            assert meta["blockers"] == blockers == len(meta["changed"])
            reward, _ = play_actions(env, env.oracle_actions(), seed=seed)
            assert reward == 1.0
    env = make(min_blockers=3)
    env.reset(seed=0)
    assert env.current_task.metadata["kind"] == "weather"


def test_chained_blocker_message_needs_cellular_which_needs_low_battery_off() -> None:
    env = make(kinds=["send_message"], min_blockers=2)
    env.reset(seed=5)
    names = [c.name for c in calls_of(env)]
    assert names == [
        "search_contacts",
        "send_message_with_phone_number",  # ConnectionError: Cellular service is not enabled
        "get_cellular_service_status",
        "set_cellular_service_status",  # PermissionError: ... low battery mode
        "get_low_battery_mode_status",
        "set_low_battery_mode_status",
        "set_cellular_service_status",
        "send_message_with_phone_number",
    ]
    assert env.current_task.required_facts == ["low battery", "cellular"]


def test_distractor_settings_stay_off_in_the_gold_state() -> None:
    env = make(kinds=["send_message", "location"], max_blockers=1, distractor_settings=2)
    for seed in range(30):
        env.reset(seed=seed)
        settings = env.state.settings
        assert sum(not getattr(settings, s) for s in SERVICES) == 3  # the needed one plus two distractors
        play_actions(env, env.oracle_actions(), seed=seed)
        assert sum(not getattr(env.state.settings, s) for s in SERVICES) == 2


def test_required_facts_are_told_in_the_final_message() -> None:
    env = make(kinds=["location", "weather"])
    for seed in range(30):
        env.reset(seed=seed)
        final = env.current_task.solution[-1]
        assert isinstance(final, str)
        for fact in env.current_task.required_facts:
            assert fact in final.lower() or fact in final
        reward, info = play_actions(env, [*env.oracle_actions()[:-1], "All done."], seed=seed)
        assert reward == 0.0 and info["verdict"]["hash_match"]


@pytest.mark.parametrize(
    "knobs",
    [{"min_blockers": 3, "max_blockers": 2}, {"kinds": ["turn_on"], "min_blockers": 2}, {"kinds": []}, {"x": 1}],
)
def test_bad_knobs_name_the_problem(knobs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="PermissionRecoveryEnv"):
        PermissionRecoveryEnv(**knobs)


def test_task_text_is_json_safe() -> None:
    env = make()
    env.reset(seed=11)
    json.dumps(env.current_task.model_dump(mode="json"))
