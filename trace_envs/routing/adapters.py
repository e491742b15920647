"""Applying routed adapters with PEFT: load several, switch with ``set_adapter``, or mix per row."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .router import BASE_ADAPTER, CapabilityCard, RoutingDecision


def load_with_adapters(base_model: str | Path, cards: Sequence[CapabilityCard], dtype: Any = None) -> tuple[Any, Any]:
    """The base model with every card's adapter loaded under the capability's name, and its tokenizer.

    Returns ``(peft_model, tokenizer)``; no adapter is merged into the base weights, so routing (with
    adapters disabled) sees the frozen base model.
    """
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with_adapters = [c for c in cards if c.adapter_path]
    if not with_adapters:
        raise ValueError("none of the capability cards has an adapter_path")
    tokenizer = AutoTokenizer.from_pretrained(str(base_model))
    kwargs = {"dtype": dtype} if dtype is not None else {}
    model = AutoModelForCausalLM.from_pretrained(str(base_model), **kwargs)
    first = with_adapters[0]
    peft_model = PeftModel.from_pretrained(model, str(first.adapter_path), adapter_name=first.name)
    for card in with_adapters[1:]:
        peft_model.load_adapter(str(card.adapter_path), adapter_name=card.name)
    peft_model.eval()
    return peft_model, tokenizer


def activate(peft_model: Any, decision: RoutingDecision) -> None:
    """Make the decision's adapter the active one (``set_adapter``), or disable adapters for "none"."""
    if decision.capability is None:
        peft_model.base_model.disable_adapter_layers()
        return
    if decision.capability not in peft_model.peft_config:
        raise KeyError(f"adapter {decision.capability!r} is not loaded; loaded: {sorted(peft_model.peft_config)}")
    peft_model.base_model.enable_adapter_layers()
    peft_model.set_adapter(decision.capability)


def adapter_names(decisions: Sequence[RoutingDecision]) -> list[str]:
    """Per-row ``adapter_names`` for ``peft_model.generate(..., adapter_names=...)`` (``__base__`` = none)."""
    return [d.adapter_name if d.capability is not None else BASE_ADAPTER for d in decisions]
