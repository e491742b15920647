"""Route tasks to capability adapters by the frozen base model's label logits (merges: ``trace_envs.baselines.merge``).

Needs the ``[train]`` extra (torch, transformers, peft) for anything that runs a model.
"""

from __future__ import annotations

from .router import (
    BASE_ADAPTER,
    CapabilityCard,
    LabelTokenError,
    Router,
    RoutingDecision,
    vllm_lora_modules,
)

__all__ = ["BASE_ADAPTER", "CapabilityCard", "LabelTokenError", "Router", "RoutingDecision", "vllm_lora_modules"]
