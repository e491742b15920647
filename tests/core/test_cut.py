"""``ConversationEnv.cut``: an episode ended from outside (a rollout's ``max_steps``) is scored as at the env's
own turn limit, once."""

from __future__ import annotations

import gymnasium as gym

import trace_envs  # noqa: F401  (registers the envs)
from trace_envs.core import ConversationEnv


def test_cut_scores_the_episode_once_and_ends_it() -> None:
    env = gym.make("trace/order-cancel-v0").unwrapped
    assert isinstance(env, ConversationEnv)
    env.reset(seed=1)
    extra = env.cut()
    assert extra["ended"] == "max_steps" and extra["verdict"]["success"] is False
    assert env.ended == "max_steps" and env.cut() == {}
    observation, reward, terminated, _, _ = env.step("hello")
    assert terminated and reward == 0.0 and "ended" in observation
