"""A summary of a registered env: what it trains, with which tools and knobs, and an example task."""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
from pydantic import BaseModel, field_validator

from .core import Capability, VerifiableEnv
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


def unwrap_capability_env(env: gym.Env[Any, Any], env_id: str = "") -> VerifiableEnv:
    """The env under Gymnasium's wrappers as one that declares a capability (run here or boxed), or a clear
    error if it declares none."""
    inner = env.unwrapped
    if not isinstance(getattr(inner, "capability", None), Capability):
        raise TypeError(f"{env_id or type(inner).__name__} is not a capability env (got {type(inner).__name__})")
    return cast(VerifiableEnv, inner)


def knob_descriptions(env: Any) -> list[KnobDescription]:
    """The knobs of an env that validates its own (``knobs``, a pydantic model); none for one that does not (a
    boxed env's options are validated in its box)."""
    knobs = getattr(env, "knobs", None)
    if not isinstance(knobs, BaseModel):
        return []
    return [
        KnobDescription(name=name, default=getattr(knobs, name), description=field.description or "")
        for name, field in type(knobs).model_fields.items()
    ]


def describe_env(env_id: str, seed: int = 0, **knobs: Any) -> EnvDescription:
    env = gym.make(env_id, **knobs)
    try:
        inner = unwrap_capability_env(env, env_id)
        observation, _ = env.reset(seed=seed)
        task = inner.current_task
        return EnvDescription(
            env_id=env_id,
            capability=inner.capability.name,
            capability_description=inner.capability.description,
            domain=inner.domain.name,
            max_turns=inner.max_turns,
            tools=list(inner.toolset),
            knobs=knob_descriptions(inner),
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
