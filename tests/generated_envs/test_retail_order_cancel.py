"""trace/retail-order-cancel-v0: the guide's starter on a real target, kit imports only."""

from __future__ import annotations

import gymnasium as gym

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.retail_order_cancel import RetailOrderCancelEnv
from trace_envs.domains.retail import RETAIL
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/retail-order-cancel-v0"


def make() -> RetailOrderCancelEnv:
    env = gym.make(ENV_ID, disable_env_checker=True).unwrapped
    assert isinstance(env, RetailOrderCancelEnv)
    return env


def test_property_suite_200_seeds() -> None:
    check_capability_env(ENV_ID, seeds=range(200))


def test_a_refusal_counts_only_after_the_lookup() -> None:
    env = make()
    assert env.domain is RETAIL
    refused = 0
    for seed in range(30):
        env.reset(seed=seed)
        if env.current_task.metadata["eligible"]:
            continue
        refused += 1
        identify, lookup, refusal = env.oracle_actions()
        assert play_actions(env, [identify, refusal], seed=seed)[0] == 0.0
        assert play_actions(env, [identify, lookup, refusal], seed=seed)[0] == 1.0
    assert refused > 5
