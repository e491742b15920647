"""A summary of a registered env: what it trains, with which tools and knobs, and an example task."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from pydantic import BaseModel, field_validator

from .core import CapabilityEnv
from .safe_text import clean_text


class KnobDescription(BaseModel):
    name: str
    default: Any
    description: str


class ExampleTask(BaseModel):
    """A task the env generated: its text comes from the env module, so control characters are removed."""

    seed: int
    task_id: str
    goal: str
    opening: str
    solution: list[str]
    required_facts: list[str]

    @field_validator("task_id", "goal", "opening", "solution", "required_facts")
    @classmethod
    def _clean(cls, value: str | list[str]) -> str | list[str]:
        return clean_text(value) if isinstance(value, str) else [clean_text(item) for item in value]


class EnvDescription(BaseModel):
    env_id: str
    capability: str
    capability_description: str
    domain: str
    max_turns: int
    tools: list[str]
    knobs: list[KnobDescription]
    example: ExampleTask


def unwrap_capability_env(env: gym.Env[Any, Any], env_id: str = "") -> CapabilityEnv:
    """The CapabilityEnv under Gymnasium's wrappers, or a clear error if there is none."""
    inner = env.unwrapped
    if not isinstance(inner, CapabilityEnv):
        raise TypeError(f"{env_id or type(inner).__name__} is not a CapabilityEnv (got {type(inner).__name__})")
    return inner


def describe_env(env_id: str, seed: int = 0, **knobs: Any) -> EnvDescription:
    env = gym.make(env_id, **knobs)
    try:
        inner = unwrap_capability_env(env, env_id)
        observation, _ = env.reset(seed=seed)
        task = inner.current_task
        fields = inner.Knobs.model_fields
        return EnvDescription(
            env_id=env_id,
            capability=inner.capability.name,
            capability_description=inner.capability.description,
            domain=inner.domain.name,
            max_turns=inner.max_turns,
            tools=list(inner.toolset),
            knobs=[
                KnobDescription(name=name, default=getattr(inner.knobs, name), description=field.description or "")
                for name, field in fields.items()
            ],
            example=ExampleTask(
                seed=seed,
                task_id=task.task_id,
                goal=task.goal,
                opening=observation,
                solution=inner.oracle_actions(),
                required_facts=task.required_facts,
            ),
        )
    finally:
        env.close()
