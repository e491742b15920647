"""Defines helpers but no CapabilityEnv subclass. Stopped by: contract (no env class)."""

from __future__ import annotations

import random


def make_task(rng: random.Random) -> dict[str, int]:
    return {"order": rng.randint(1, 9)}
