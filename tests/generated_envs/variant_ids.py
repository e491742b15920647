"""Test-only env ids for the retail variants of the shipped envs, so the property suite (which takes an
id) runs on every variant. Importing this module registers them; the suite's determinism check imports
it in its subprocess too, because it is the ids' entry-point module. The ``tracetest/`` namespace keeps
them out of ``trace_envs.registry.list_envs()``.
"""

from __future__ import annotations

import gymnasium as gym

from generated_envs.multi_step import MultiStepEnv
from generated_envs.precondition import PreconditionEnv

__all__ = ["MULTI_STEP_RETAIL", "PRECONDITION_RETAIL", "MultiStepEnv", "PreconditionEnv"]

MULTI_STEP_RETAIL = "tracetest/multi-step-retail-v0"
PRECONDITION_RETAIL = "tracetest/precondition-retail-v0"

for _env_id, _entry, _kwargs in [
    (MULTI_STEP_RETAIL, f"{__name__}:MultiStepEnv", {"variant": "retail"}),
    (PRECONDITION_RETAIL, f"{__name__}:PreconditionEnv", {"variant": "retail"}),
]:
    if _env_id not in gym.registry:
        gym.register(id=_env_id, entry_point=_entry, kwargs=_kwargs)
