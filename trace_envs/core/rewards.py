"""Which rewards a consumer accepts from an env: finite, and inside ``[0, 1]`` for a capability env.

Rollouts, evaluation and training ask :func:`reward_problem` of every reward before they add, store or train on
it: an env whose code is not trusted (a boxed module) must not put ``inf``, ``nan`` or ``1e39`` into a mean,
a stored episode or a GRPO advantage. The boxed proxy already refuses such a reward; this is the consumers'
own check, for every env they play.
"""

from __future__ import annotations

from math import isfinite
from typing import Any

from .contract import declares_capability

CAPABILITY_REWARD_RANGE = (0.0, 1.0)
"""The range of every capability env's reward (its verifier's score)."""


def reward_problem(reward: Any, env: Any) -> str | None:
    """Why ``reward`` (of a step of ``env``) cannot be used, in one line; ``None`` if it can."""
    try:
        value = float(reward)
    except (TypeError, ValueError):
        return f"the env's reward {str(reward)[:40]!r} is not a number"
    if not isfinite(value):
        return f"the env's reward is {value!r}, not a finite number"
    if declares_capability(getattr(env, "unwrapped", env)):
        low, high = CAPABILITY_REWARD_RANGE
        if not low <= value <= high:
            return f"the env's reward is {value!r}, outside a capability env's [{low:g}, {high:g}]"
    return None
