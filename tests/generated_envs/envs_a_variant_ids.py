"""Test-only ids for the non-default variants of ``trace/structured-data-v0`` and ``trace/tool-precision-v0``,
so the property suite (which takes an id) runs on every variant. Importing this module registers them; the
suite's determinism check imports it in its subprocess too, because it is the ids' entry-point module. The
``tracetest/`` namespace keeps them out of ``trace_envs.registration.list_envs()``.
"""

from __future__ import annotations

import gymnasium as gym

from generated_envs.structured_data import StructuredDataEnv
from generated_envs.tool_precision import ToolPrecisionEnv

__all__ = ["STRUCTURED_DATA_RETAIL", "TOOL_PRECISION_AIRLINE", "StructuredDataEnv", "ToolPrecisionEnv"]

STRUCTURED_DATA_RETAIL = "tracetest/structured-data-retail-v0"
TOOL_PRECISION_AIRLINE = "tracetest/tool-precision-airline-v0"

for _env_id, _entry, _kwargs in [
    (STRUCTURED_DATA_RETAIL, f"{__name__}:StructuredDataEnv", {"variant": "retail"}),
    (TOOL_PRECISION_AIRLINE, f"{__name__}:ToolPrecisionEnv", {"variant": "airline"}),
]:
    if _env_id not in gym.registry:
        gym.register(id=_env_id, entry_point=_entry, kwargs=_kwargs)
