"""trace/order-cancel-v0: a refusal must follow the order's lookup and give its status."""

from __future__ import annotations

import gymnasium as gym

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.order_cancel import OrderCancelEnv
from trace_envs.rollout import play_actions

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
