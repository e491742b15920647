"""trace/precondition-v0: act only when the policy allows it; acting without checking fails where it does not."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.precondition import PreconditionEnv
from tests.generated_envs.variant_ids import PRECONDITION_RETAIL
from trace_envs.core import ToolCall, format_tool_call
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/precondition-v0"
VARIANTS = ("airline", "retail")
NOW = datetime(2024, 5, 15, 15, 0, 0)


def make(variant: str = "airline", **knobs: Any) -> PreconditionEnv:
    env = gym.make(ENV_ID, variant=variant, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, PreconditionEnv)
    return env


@pytest.mark.parametrize("seed", [0, 5, 99])
def test_gym_make_with_seed(seed: int) -> None:
    env = gym.make(ENV_ID, seed=seed)
    observation, info = env.reset()
    assert "cancel reservation" in observation
    assert info["capability"] == "precondition_verification"
    assert "2024-05-15" in info["policy"]  # "now" is part of the policy text, never the wall clock


@pytest.mark.parametrize("env_id", [ENV_ID, PRECONDITION_RETAIL], ids=VARIANTS)
def test_property_suite_200_seeds(env_id: str) -> None:
    check_capability_env(env_id, seeds=range(200))


@pytest.mark.parametrize("variant", VARIANTS)
def test_about_half_the_seeds_are_not_allowed_and_acting_without_checking_fails_on_them(variant: str) -> None:
    env = make(variant)
    not_allowed = 0
    for seed in range(200):
        env.reset(seed=seed)
        task = env.current_task
        flawed = env.flawed_actions()
        assert flawed is not None
        reward, _ = play_actions(env, flawed, seed=seed)
        if task.metadata["allowed"]:
            assert reward == 1.0  # acting at once is fine where the policy allows it
        else:
            not_allowed += 1
            assert reward == 0.0, f"seed {seed}: acting without checking was not caught"
    assert 80 <= not_allowed <= 120


def _oldest_ineligible_basic_economy(env: PreconditionEnv) -> int:
    """A seed whose request is the paper's case: basic economy, booked 14 days ago, no insurance."""
    for seed in range(500):
        env.reset(seed=seed)
        task = env.current_task
        if task.metadata["kind"] != "ineligible":
            continue
        res = task.initial_state["reservations"][task.metadata["target"]]
        booked = datetime.fromisoformat(res["created_at"])
        if res["cabin"] == "basic_economy" and res["insurance"] == "no" and NOW - booked == timedelta(days=14):
            return seed
    raise AssertionError("no seed of the paper's case in 500 seeds")


def test_cancelling_an_ineligible_basic_economy_booking_is_caught() -> None:
    """The paper's failure: basic economy, booked 14 days ago, no insurance, cancelled without any check."""
    env = make("airline")
    seed = _oldest_ineligible_basic_economy(env)
    task = env.current_task
    rid = task.metadata["target"]
    flights = task.initial_state["flights"]
    segments = task.initial_state["reservations"][rid]["flights"]
    assert all(flights[s["flight_number"]]["dates"][s["date"]]["status"] != "cancelled" for s in segments)
    cancel = format_tool_call(ToolCall(name="cancel_reservation", arguments={"reservation_id": rid}))
    reward, info = play_actions(
        env,
        [f'{{"name": "get_user_details", "arguments": {{"user_id": "{task.initial_state["reservations"][rid]["user_id"]}"}}}}', cancel,
         f"Reservation {rid} has been cancelled."],
        seed=seed,
    )  # fmt: skip
    assert reward == 0.0
    assert info["verdict"]["hash_match"] is False  # the cancellation itself is what the verifier rejects
    oracle_reward, _ = play_actions(env, env.oracle_actions(), seed=seed)
    assert oracle_reward == 1.0
    assert not any(c.name == "cancel_reservation" for c in task.solution if isinstance(c, ToolCall))


@pytest.mark.parametrize("variant", VARIANTS)
def test_refusing_everything_fails_where_the_change_is_allowed(variant: str) -> None:
    env = make(variant)
    for seed in range(60):
        env.reset(seed=seed)
        task = env.current_task
        if not task.metadata["allowed"]:
            continue
        checks = [a for a in env.oracle_actions() if a.startswith("{")][:-1]  # every lookup, no change
        refusal = f"I'm sorry, but {task.metadata['target']} is not eligible for this change."
        assert play_actions(env, [*checks, refusal], seed=seed)[0] == 0.0


def test_retail_status_refusal_must_say_the_status() -> None:
    env = make("retail")
    seen = 0
    for seed in range(80):
        env.reset(seed=seed)
        task = env.current_task
        if not task.metadata["kind"].endswith("wrong_status"):
            continue
        blind = [*env.oracle_actions()[:-1], f"Sorry, order {task.metadata['target']} is not eligible."]
        assert play_actions(env, blind, seed=seed)[0] == 0.0
        seen += 1
    assert seen > 10


def test_not_allowed_share_knob() -> None:
    for share, low, high in [(0.0, 0, 0), (1.0, 50, 50)]:
        env = make("retail", not_allowed_share=share)
        count = 0
        for seed in range(50):
            env.reset(seed=seed)
            count += not env.current_task.metadata["allowed"]
        assert low <= count <= high
    with pytest.raises(ValueError, match="not_allowed_share"):
        gym.make(ENV_ID, not_allowed_share=1.5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_oracle_confirms_once_on_allowed_seeds_and_never_on_the_others(variant: str) -> None:
    env = make(variant)
    for seed in range(40):
        env.reset(seed=seed)
        task = env.current_task
        play_actions(env, env.oracle_actions(), seed=seed)
        pairs = zip(env.messages, env.messages[1:], strict=False)
        replies = [b["content"] for a, b in pairs if a["role"] == "assistant" and str(a.get("content")).endswith("?")]
        assert replies == ([task.user.confirm_reply] if task.metadata["allowed"] else [])


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_refusal_without_the_checks_fails_even_with_the_right_words(variant: str) -> None:
    """The issue's canned answer: "…not eligible for cancellation" won 58 of 100 airline seeds. A refusal
    now counts only after the record was read, so the oracle's own refusal, said without the checks or
    before them, fails on every not-allowed seed; said after them it passes."""
    env = make(variant)
    seen = 0
    for seed in range(60):
        env.reset(seed=seed)
        task = env.current_task
        if task.metadata["allowed"]:
            continue
        seen += 1
        oracle = env.oracle_actions()
        assert task.flawed_solution is not None  # the customer lookups, the write, the success message
        auth = [format_tool_call(c) for c in task.flawed_solution[:-2] if isinstance(c, ToolCall)]
        checks = [a for a in oracle if a.startswith("{") and a not in auth]
        refusal = oracle[-1]
        assert play_actions(env, [*auth, refusal], seed=seed)[0] == 0.0, f"seed {seed}: refused without checking"
        early = play_actions(env, [*auth, f"{refusal} Shall I double-check it?", *checks, "Bye."], seed=seed)
        assert early[0] == 0.0, f"seed {seed}: the refusal before the checks counted"
        assert play_actions(env, [*auth, *checks, refusal], seed=seed)[0] == 1.0
    assert seen > 20


def test_an_airline_refusal_must_give_the_cabin_and_the_booking_date() -> None:
    env = make("airline")
    seen = 0
    for seed in range(80):
        env.reset(seed=seed)
        task = env.current_task
        if task.metadata["kind"] != "ineligible":
            continue
        seen += 1
        booked = task.initial_state["reservations"][task.metadata["target"]]["created_at"][:10]
        assert task.required_facts == ["not eligible", "economy", booked]
        checked = env.oracle_actions()[:-1]
        vague = f"I'm sorry, but reservation {task.metadata['target']} is not eligible for cancellation."
        assert play_actions(env, [*checked, vague], seed=seed)[0] == 0.0
    assert seen > 10


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_constant_answer_wins_even_when_every_request_is_refused(variant: str) -> None:
    """With not_allowed_share=1 "always refuse" is the right decision on every seed; it must still
    take the lookup. The env's own refusals (and canned ones), sent as constants, win no seed."""
    from trace_envs.testing.properties import constant_answers

    env = make(variant, not_allowed_share=1.0)
    candidates = constant_answers(env, range(100, 110))
    assert sum("not eligible" in c for c in candidates) >= 10
    wins = {c: [s for s in range(40) if play_actions(env, [c] * env.max_turns, seed=s)[0] > 0] for c in candidates}
    assert {c: won for c, won in wins.items() if won} == {}
