"""ToolSandbox metrics over a scenario set: mean similarity and the perfect count (similarity == 1.0)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from .scenario import DeviceScenario


class ScenarioScore(BaseModel):
    name: str
    categories: list[str] = Field(default_factory=list)
    similarity: float = Field(ge=0.0, le=1.0)
    turn_count: int = 0


class CategoryMetrics(BaseModel):
    count: int
    mean_similarity: float
    perfect_count: int


class DeviceMetrics(BaseModel):
    """Aggregates as the TRACE paper reports them (and ToolSandbox's per-category means)."""

    count: int
    mean_similarity: float
    perfect_count: int
    perfect_rate: float
    per_category: dict[str, CategoryMetrics]


def mean_similarity(similarities: Iterable[float]) -> float:
    """Arithmetic mean of per-scenario similarity (0 for an empty set)."""
    values = list(similarities)
    return sum(values) / len(values) if values else 0.0


def perfect_count(similarities: Iterable[float]) -> int:
    """Scenarios whose similarity is exactly 1.0."""
    return sum(1 for value in similarities if value == 1.0)


def summarize(scores: Sequence[ScenarioScore]) -> DeviceMetrics:
    values = [s.similarity for s in scores]
    categories = sorted({c for s in scores for c in s.categories})
    per_category = {}
    for category in [*categories, "ALL_CATEGORIES"]:
        members = [s.similarity for s in scores if category == "ALL_CATEGORIES" or category in s.categories]
        per_category[category] = CategoryMetrics(
            count=len(members), mean_similarity=mean_similarity(members), perfect_count=perfect_count(members)
        )
    return DeviceMetrics(
        count=len(values),
        mean_similarity=mean_similarity(values),
        perfect_count=perfect_count(values),
        perfect_rate=perfect_count(values) / len(values) if values else 0.0,
        per_category=per_category,
    )


def score_scenarios(
    scenarios: Sequence[DeviceScenario],
    actions: Callable[[Any], list[str]] | None = None,
    user_model: Any = None,
) -> list[ScenarioScore]:
    """Play each scenario with ``actions(env)`` (default: its reference solution) and score it."""
    from trace_envs.core import STOP_TOKEN

    from .env import DeviceEnv

    scores = []
    for scenario in scenarios:
        env = DeviceEnv(scenarios=[scenario], user_model=user_model)
        env.reset(seed=0)
        plan = actions(env) if actions is not None else env.oracle_actions()
        for action in [*plan, STOP_TOKEN]:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        verdict = env.verify()
        scores.append(
            ScenarioScore(
                name=scenario.name,
                categories=list(scenario.categories),
                similarity=verdict.reward,
                turn_count=env.turn_count(),
            )
        )
    return scores
