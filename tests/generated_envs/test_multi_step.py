"""trace/multi-step-v0: every sub-task of a compound request must be done; stopping early is caught."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.multi_step import MultiStepEnv
from tests.generated_envs.variant_ids import MULTI_STEP_RETAIL
from trace_envs.core import ToolCall, format_tool_call
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/multi-step-v0"
VARIANTS = ("airline", "retail")


def make(variant: str = "airline", **knobs: Any) -> MultiStepEnv:
    env = gym.make(ENV_ID, variant=variant, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, MultiStepEnv)
    return env


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_gym_make_with_seed(seed: int) -> None:
    env = gym.make(ENV_ID, seed=seed)
    observation, info = env.reset()
    assert observation.startswith("Hi!")
    assert info["capability"] == "multi_step_task_completion"
    assert info["seed"] == seed


@pytest.mark.parametrize("env_id", [ENV_ID, MULTI_STEP_RETAIL], ids=VARIANTS)
def test_property_suite_200_seeds(env_id: str) -> None:
    check_capability_env(env_id, seeds=range(200))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("count", [2, 3, 4])
def test_subtask_knob_sets_the_number_of_state_changes(variant: str, count: int) -> None:
    env = make(variant, subtasks=count)
    for seed in range(15):
        observation, _ = env.reset(seed=seed)
        task = env.current_task
        writes = [s for s in task.solution if isinstance(s, ToolCall) and env.toolset.kind_of(s.name) == "write"]
        assert len(writes) == count
        assert f"I have {count} things" in observation
        for write in writes:  # the opening names every record the agent has to change
            target = write.arguments.get("reservation_id") or write.arguments.get("order_id")
            assert target is None or target in observation


@pytest.mark.parametrize("variant", VARIANTS)
def test_stopping_after_the_first_of_three_subtasks_fails(variant: str) -> None:
    """The paper's failure: first sub-task done, a closing line, the other two never attempted."""
    env = make(variant, subtasks=3)
    for seed in range(60):
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        assert flawed is not None
        reward, info = play_actions(env, flawed, seed=seed)
        assert reward == 0.0
        assert info["ended"] == "user_stop"  # the user closes the conversation: no reminder
        assert info["verdict"]["hash_match"] is False
        # exactly one of the three requested writes happened
        writes = [
            m
            for m in env.messages
            if m.get("tool_calls") and env.toolset.kind_of(m["tool_calls"][0]["name"]) == "write"
        ]
        assert len(writes) == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_skipping_only_the_last_subtask_fails_and_any_order_succeeds(variant: str) -> None:
    env = make(variant, subtasks=3)
    for seed in range(40):
        env.reset(seed=seed)
        task = env.current_task
        subtasks = task.metadata["subtasks"]
        auth = [format_tool_call(ToolCall.model_validate(c)) for c in task.metadata["auth"]]

        def part(sub: dict[str, Any]) -> list[str]:
            return [
                *(format_tool_call(ToolCall.model_validate(r)) for r in sub["reads"]),
                sub["confirm"],
                format_tool_call(ToolCall.model_validate(sub["write"])),
            ]

        summary = "All done: " + "; ".join(s["done"] for s in subtasks) + "."
        two_of_three = [*auth, *part(subtasks[0]), *part(subtasks[1]), summary]
        assert play_actions(env, two_of_three, seed=seed)[0] == 0.0
        reversed_order = [*auth, *(a for sub in reversed(subtasks) for a in part(sub)), summary]
        assert play_actions(env, reversed_order, seed=seed)[0] == 1.0


def test_airline_cancellations_must_report_the_refund() -> None:
    env = make("airline", subtasks=4)
    checked = 0
    for seed in range(40):
        env.reset(seed=seed)
        task = env.current_task
        if "cancel" not in task.metadata["kinds"]:
            continue
        # every change made and confirmed, but no refund amount ever said
        vague = [
            "Shall I go ahead with this change?" if a.endswith("Shall I proceed?") else a for a in env.oracle_actions()
        ]
        silent = [*vague[:-1], "Everything you asked for is done."]
        reward, info = play_actions(env, silent, seed=seed)
        assert info["verdict"]["hash_match"] is True
        assert reward == 0.0
        checked += 1
    assert checked > 10


def test_policy_has_the_multi_part_rules_and_the_domain_policy() -> None:
    for variant in VARIANTS:
        env = make(variant)
        _, info = env.reset(seed=0)
        assert info["policy"].startswith(env.domain.policy)
        assert "Requests with several parts" in info["policy"]


def test_bad_knob_names_the_field() -> None:
    with pytest.raises(ValueError, match="subtasks"):
        gym.make(ENV_ID, subtasks=7)
    with pytest.raises(ValueError, match="variant"):
        gym.make(ENV_ID, variant="device")


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_confirmation_question_of_the_oracle_gets_a_yes(variant: str) -> None:
    env = make(variant, subtasks=4)
    for seed in range(30):
        env.reset(seed=seed)
        play_actions(env, env.oracle_actions(), seed=seed)
        pairs = zip(env.messages, env.messages[1:], strict=False)
        replies = [b["content"] for a, b in pairs if a["role"] == "assistant" and str(a.get("content")).endswith("?")]
        assert replies == [env.current_task.user.confirm_reply] * 4
