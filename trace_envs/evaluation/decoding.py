"""How each evaluated policy decodes: an adapter is evaluated as it was trained, sampled at the temperature its
``trace_adapter.json`` records, unless the caller sets a temperature; everything else as the caller says
(greedy by default). The results and the report name the decoding of every policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_envs.llm import ModelConfig
from trace_envs.training.metadata import METADATA_FILE, load_metadata

from .policies import PolicyEntry

GREEDY = "greedy"


def adapter_folders(entry: PolicyEntry) -> list[Path]:
    """The adapter folders a policy plays: a routed policy's candidates, or the adapter of ``hf:<base>@<adapter>``."""
    if entry.kind == "routed":
        return [Path(a) for a in entry.adapters]
    if not entry.spec.startswith("hf:"):
        return []
    try:
        adapter = ModelConfig.parse(entry.spec).resolve_adapter()
    except (ValueError, FileNotFoundError):  # the rollout names a bad spec with its own error
        return []
    return [] if adapter is None else [adapter]


def trained_temperature(entry: PolicyEntry) -> float | None:
    """The temperature the policy's adapters were trained at, when they record one and all agree."""
    temperatures = set()
    for folder in adapter_folders(entry):
        if not (folder / METADATA_FILE).is_file():
            return None
        value = load_metadata(folder).config.get("temperature")
        if not isinstance(value, int | float):
            return None
        temperatures.add(float(value))
    return temperatures.pop() if len(temperatures) == 1 else None


def policy_sampling(entry: PolicyEntry, sampling: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sampling options ``entry`` is evaluated with: the caller's, with an adapter's trained temperature
    when the caller set none."""
    if sampling is not None and "temperature" in sampling:
        return sampling
    temperature = trained_temperature(entry)
    if temperature is None:
        return sampling
    return {**(sampling or {}), "temperature": temperature}


def decoding_label(sampling: dict[str, Any] | None) -> str:
    """``greedy``, or ``sampled (temperature T)``: what a results table says of a policy's decoding."""
    temperature = float((sampling or {}).get("temperature") or 0.0)
    return GREEDY if temperature <= 0 else f"sampled (temperature {temperature:g})"
