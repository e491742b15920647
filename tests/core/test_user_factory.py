"""Core builds a model-played user through a registered factory, and ``import trace_envs`` registers ``LLMUser``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import trace_envs.core.user as user_module
from trace_envs.core import ScriptedUser, Task, User
from trace_envs.core.user import set_user_factory
from trace_envs.llm_user import LLMUser

ENV_ID = "trace/order-cancel-v0"


def test_import_trace_envs_registers_the_llm_user() -> None:
    assert len(user_module._USER_FACTORY) == 1
    assert user_module._USER_FACTORY[0] == LLMUser.from_task


def test_user_model_goes_to_the_registered_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[Any, str]] = []

    def factory(model: Any, task: Task) -> User:
        built.append((model, task.task_id))
        return ScriptedUser(task.user)

    monkeypatch.setattr(user_module, "_USER_FACTORY", [])
    set_user_factory(factory)
    env = gym.make(ENV_ID, user_model="a chat model")
    env.reset(seed=1)
    assert built == [("a chat model", "precondition_verification-1")]
    assert isinstance(env.unwrapped.user, ScriptedUser)  # type: ignore[attr-defined]


def test_without_a_factory_a_user_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(user_module, "_USER_FACTORY", [])
    env = gym.make(ENV_ID, user_model="a chat model")
    with pytest.raises(RuntimeError, match=r"no user factory is registered.*set_user_factory"):
        env.reset(seed=1)


def test_without_a_user_model_the_user_is_scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(user_module, "_USER_FACTORY", [])
    env = gym.make(ENV_ID)
    env.reset(seed=1)
    assert isinstance(env.unwrapped.user, ScriptedUser)  # type: ignore[attr-defined]
