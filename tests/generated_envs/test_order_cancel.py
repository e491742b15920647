"""trace/order-cancel-v0: a refusal must follow the order's lookup and give its status."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.order_cancel import OrderCancelEnv
from tests.generated_envs.envs_a_variant_ids import ORDER_CANCEL_LOOKUP_REQUIRED
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/order-cancel-v0"


def make() -> OrderCancelEnv:
    env = gym.make(ENV_ID, disable_env_checker=True).unwrapped
    assert isinstance(env, OrderCancelEnv)
    return env


def test_a_canned_already_delivered_answer_wins_no_seed() -> None:
    """The issue's case: "…already delivered…" sent every turn won 24 of 100 seeds."""
    env = make()
    canned = "I'm sorry, your order is already delivered, so it cannot be cancelled."
    wins = [seed for seed in range(100) if play_actions(env, [canned] * env.max_turns, seed=seed)[0] > 0]
    assert wins == []


def test_a_refusal_counts_only_after_the_lookup() -> None:
    env = make()
    seen = 0
    for seed in range(40):
        env.reset(seed=seed)
        task = env.current_task
        if task.metadata["eligible"]:
            assert task.required_reads == []  # cancelling is checked by the state hash
            continue
        seen += 1
        lookup, refusal = env.oracle_actions()
        assert play_actions(env, [refusal], seed=seed)[0] == 0.0
        reward, info = play_actions(env, [f"{refusal} Shall I check it?", lookup, "Bye."], seed=seed)
        assert reward == 0.0 and info["verdict"]["reads_done"] == {lookup: True}
        assert play_actions(env, [lookup, refusal], seed=seed)[0] == 1.0
    assert seen > 10


@pytest.mark.parametrize("env_id", [ENV_ID, ORDER_CANCEL_LOOKUP_REQUIRED], ids=["default", "lookup_required"])
def test_property_suite_100_seeds(env_id: str) -> None:
    check_capability_env(env_id, seeds=range(100))


def test_with_lookup_required_acting_without_the_check_fails_on_every_seed() -> None:
    """The learning benchmark's variant: cancelling at once no longer pays on pending orders; looking up and
    then cancelling does, and the default env is unchanged (cancelling at once pays on pending orders)."""
    default, strict = make(), gym.make(ENV_ID, lookup_required=True, disable_env_checker=True).unwrapped
    pending = 0
    for seed in range(60):
        strict.reset(seed=seed)
        default.reset(seed=seed)
        assert strict.current_task.metadata == default.current_task.metadata  # the same tasks
        flawed, oracle = strict.flawed_actions(), strict.oracle_actions()
        assert flawed is not None
        assert play_actions(strict, flawed, seed=seed)[0] == 0.0
        assert play_actions(strict, oracle, seed=seed)[0] == 1.0
        if strict.current_task.metadata["eligible"]:
            pending += 1
            assert play_actions(default, flawed, seed=seed)[0] == 1.0
    assert 20 < pending < 40


def test_with_lookup_required_a_lookup_after_cancelling_does_not_count() -> None:
    """Cancelling first and looking up after checks nothing: the warmed SmolLM2 did exactly that, and the variant
    paid it on every pending order. Looking up first still pays; the default env is unchanged."""
    strict = gym.make(ENV_ID, lookup_required=True, disable_env_checker=True).unwrapped
    default = make()
    checked = 0
    for seed in range(40):
        strict.reset(seed=seed)
        if not strict.current_task.metadata["eligible"]:
            continue
        lookup, cancel, confirm = strict.oracle_actions()
        late = [cancel, lookup, confirm]
        reward, info = play_actions(strict, late, seed=seed)
        assert reward == 0.0 and info["verdict"]["reads_done"] == {lookup: False}
        assert play_actions(strict, [lookup, cancel, lookup, confirm], seed=seed)[0] == 1.0
        assert play_actions(default, late, seed=seed)[0] == 1.0
        checked += 1
    assert checked > 10
