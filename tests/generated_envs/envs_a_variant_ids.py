"""Test-only ids for the non-default variants of ``trace/structured-data-v0``, ``trace/tool-precision-v0`` and
``trace/order-cancel-v0`` (``lookup_required``),
so the property suite (which takes an id) runs on every variant. Importing this module registers them; the
suite's determinism check imports it in its subprocess too, because it is the ids' entry-point module. The
``tracetest/`` namespace keeps them out of ``trace_envs.registry.list_envs()``.
"""

from __future__ import annotations

import gymnasium as gym

from generated_envs.order_cancel import OrderCancelEnv
from generated_envs.structured_data import StructuredDataEnv
from generated_envs.tool_precision import ToolPrecisionEnv

__all__ = [
    "ORDER_CANCEL_LOOKUP_REQUIRED",
    "STRUCTURED_DATA_RETAIL",
    "TOOL_PRECISION_AIRLINE",
    "OrderCancelEnv",
    "StructuredDataEnv",
    "ToolPrecisionEnv",
]

STRUCTURED_DATA_RETAIL = "tracetest/structured-data-retail-v0"
TOOL_PRECISION_AIRLINE = "tracetest/tool-precision-airline-v0"
ORDER_CANCEL_LOOKUP_REQUIRED = "tracetest/order-cancel-lookup-required-v0"

for _env_id, _entry, _kwargs in [
    (STRUCTURED_DATA_RETAIL, f"{__name__}:StructuredDataEnv", {"variant": "retail"}),
    (TOOL_PRECISION_AIRLINE, f"{__name__}:ToolPrecisionEnv", {"variant": "airline"}),
    (ORDER_CANCEL_LOOKUP_REQUIRED, f"{__name__}:OrderCancelEnv", {"lookup_required": True}),
]:
    if _env_id not in gym.registry:
        gym.register(id=_env_id, entry_point=_entry, kwargs=_kwargs)
