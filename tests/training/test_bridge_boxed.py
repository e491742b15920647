"""Boxed and in-process envs train alike: the reference solution played through the TRL bridge (the tool methods
``environment_factory`` offers, ``send_message_to_user`` and ``get_reward``) scores 1.0 on every shipped capability
env, in-process and in its boxed twin, with the same transcript. Every synthesized env is boxed, so this is the
path GRPO takes on them."""

from __future__ import annotations

import sys

import gymnasium as gym
import pytest

from trace_envs.registry import env_class, list_capability_envs
from trace_envs.training import oracle_conversation, trl_environment

if not sys.platform.startswith("linux"):
    pytest.skip("boxes need Linux", allow_module_level=True)


def shipped_capability_envs() -> list[str]:
    """The shipped capability envs (the ``generated_envs`` plugin's)."""
    return [i for i in list_capability_envs() if getattr(env_class(i), "__module__", "").startswith("generated_envs")]


@pytest.mark.parametrize("env_id", shipped_capability_envs())
def test_the_bridge_plays_the_reference_solution_alike_in_process_and_boxed(env_id: str) -> None:
    from trace_envs.registry import box_installed_env

    boxed_id = box_installed_env(env_id)
    try:
        in_process, boxed = trl_environment(env_id), trl_environment(boxed_id)
        for seed in (2, 7):
            ours, theirs = oracle_conversation(boxed, seed), oracle_conversation(in_process, seed)
            assert theirs["reward"] == 1.0, f"{env_id} seed {seed}: {theirs['transcript'][-400:]}"
            assert ours["reward"] == 1.0, f"{boxed_id} seed {seed}: {ours['transcript'][-400:]}"
            assert ours["transcript"] == theirs["transcript"]
            assert ours["messages"] == theirs["messages"]
    finally:
        gym.registry.pop(boxed_id, None)
