"""Envs of a user's own, outside the ``trace/`` namespace, registered when this module is imported (as a
user's module is with ``--import``): a plain text env, one whose steps always fail, and a CapabilityEnv
with a capability no shipped env has."""

from __future__ import annotations

import string
import time
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from generated_envs.order_cancel import OrderCancelEnv
from trace_envs.core import Capability

ECHO_ID = "usertest/Echo-v0"
BROKEN_ID = "usertest/Broken-v0"
CAPABILITY_ID = "usertest/Careful-v0"


class EchoEnv(gym.Env[str, str]):
    """Greets, then ends after ``turns`` agent turns; an empty last message wins. ``step_delay_s`` makes
    each step slow (a stand-in for a slow simulator, used to interrupt a run part way)."""

    observation_space = spaces.Text(max_length=200, charset=string.printable)
    action_space = spaces.Text(max_length=200, charset=string.printable)

    def __init__(self, turns: int = 2, step_delay_s: float = 0.0):
        if turns < 1:
            raise ValueError(f"turns must be >= 1, got {turns}")
        self.turns = turns
        self.step_delay_s = step_delay_s
        self.turn = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.turn = 0
        return f"hello {seed}", {"tools": []}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.step_delay_s:
            time.sleep(self.step_delay_s)
        self.turn += 1
        done = self.turn >= self.turns
        return f"echo {action}", float(done and action == ""), done, False, {}


class BrokenEnv(EchoEnv):
    """Every step raises."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        raise RuntimeError("the broken env's step always fails")


class CarefulEnv(OrderCancelEnv):
    """The order-cancel env under a capability name of the user's own."""

    capability = Capability(name="careful_cancelling", description="Cancel only what may be cancelled.")


for env_id, cls in ((ECHO_ID, EchoEnv), (BROKEN_ID, BrokenEnv), (CAPABILITY_ID, CarefulEnv)):
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=f"{__name__}:{cls.__name__}")
