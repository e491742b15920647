"""Deliberately broken envs, one defect each, that the property suite must catch."""

from __future__ import annotations

import random
from typing import ClassVar

import gymnasium as gym

from generated_envs.order_cancel import OrderCancelEnv
from trace_envs.core import Domain, Task, Toolset
from trace_envs.domains.tools import tool
from trace_envs.domains.toy_shop import TOY_SHOP, cancel_order, get_order_details


class GlobalRandomEnv(OrderCancelEnv):
    """Draws from the global RNG: tasks differ between processes."""

    def generate(self, rng: random.Random) -> Task:
        return super().generate(random.Random(rng.random() + random.random()))


class ConstantTaskEnv(OrderCancelEnv):
    """Ignores the seed: every seed gives the same task."""

    def generate(self, rng: random.Random) -> Task:
        return super().generate(random.Random(0))


class BrokenOracleEnv(OrderCancelEnv):
    """The reference solution never tells the user the outcome."""

    def generate(self, rng: random.Random) -> Task:
        task = super().generate(rng)
        solution = [s for s in task.solution if not isinstance(s, str)]
        return task.model_copy(update={"solution": solution, "user": task.user.model_copy(update={"replies": []})})


class LaxVerifierEnv(OrderCancelEnv):
    """Requires no facts: doing nothing 'solves' every ineligible order."""

    def generate(self, rng: random.Random) -> Task:
        return super().generate(rng).model_copy(update={"required_facts": []})


class CannedRefusalEnv(OrderCancelEnv):
    """A refusal needs only a fixed phrase and no lookup: the canned "…cannot be cancelled" wins every
    ineligible seed, while the empty, random-text and repeat-one-call policies still score 0."""

    def generate(self, rng: random.Random) -> Task:
        task = super().generate(rng)
        if task.metadata["eligible"]:
            return task
        update = {"required_facts": ["cannot be cancelled"], "required_reads": [], "forbidden_facts": []}
        return task.model_copy(update=update)


class KeywordStuffingEnv(OrderCancelEnv):
    """Forbids no contradicting status: a lookup followed by a message naming every status word wins every
    ineligible seed, though no single canned message and none of the plain junk policies does."""

    def generate(self, rng: random.Random) -> Task:
        return super().generate(rng).model_copy(update={"forbidden_facts": []})


class FlawedIsOracleEnv(OrderCancelEnv):
    """Its 'flawed' solution is the reference solution."""

    def flawed_actions(self) -> list[str] | None:
        return self.oracle_actions()


class CrashingEnv(OrderCancelEnv):
    """Raises on any non-ASCII action text."""

    def step(self, action):  # type: ignore[no-untyped-def]
        if isinstance(action, str) and any(ord(c) > 127 for c in action):
            raise ValueError("unhandled action")
        return super().step(action)


class LeakyEnv(OrderCancelEnv):
    """Keeps a class-level counter that changes every later task."""

    episodes: ClassVar[list[int]] = []

    def generate(self, rng: random.Random) -> Task:
        self.episodes.append(1)
        return super().generate(random.Random(rng.random() + len(self.episodes)))


@tool(kind="read", name="get_order_details")
def reworded_get_order_details(state, order_id: str):  # type: ignore[no-untyped-def]
    """Look an order up (a reworded description: not the domain's schema).

    Args:
        order_id: The order id.
    """
    return get_order_details(state, order_id=order_id)


class RedefinedToolEnv(OrderCancelEnv):
    """Redefines a domain tool with a different schema."""

    domain = Domain(
        "toy_shop", TOY_SHOP.state_model, Toolset([reworded_get_order_details, cancel_order]), TOY_SHOP.policy
    )


BROKEN = {
    "determinism": GlobalRandomEnv,
    "diversity": ConstantTaskEnv,
    "oracle_solves": BrokenOracleEnv,
    "junk_fails": LaxVerifierEnv,
    "constant_answer_fails": CannedRefusalEnv,
    "adversarial_junk_fails": KeywordStuffingEnv,
    "flawed_fails": FlawedIsOracleEnv,
    "any_action_is_safe": CrashingEnv,
    "no_state_leak": LeakyEnv,
    "tool_schemas": RedefinedToolEnv,
}


def broken_env_id(prop: str) -> str:
    """Test-only namespace: never listed by ``trace_envs.list_envs()``, so other tests never see these."""
    return f"tracetest/broken-{prop.replace('_', '-')}-v0"


for _property, _cls in BROKEN.items():
    if broken_env_id(_property) not in gym.registry:
        gym.register(id=broken_env_id(_property), entry_point=f"{__name__}:{_cls.__name__}")
