"""Consolidation baseline: PEFT weighted merges of capability adapters load and run."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trace_envs.routing.merge import merge_adapters
from trace_envs.training import load_metadata

pytestmark = pytest.mark.train


@pytest.mark.parametrize("combination", ["linear", "ties", "dare_linear", "svd"])
def test_merged_adapter_is_loadable(tiny_model: Path, adapters: list[Path], tmp_path: Path, combination: str) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    out = tmp_path / f"merged-{combination}"
    meta = merge_adapters(tiny_model, adapters, out, combination_type=combination)  # type: ignore[arg-type]
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    saved = load_metadata(out)
    assert saved == meta and saved.status == "merged" and saved.capability == f"merged_{combination}"
    ids = torch.tensor([[5, 6, 7, 8]])
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()
    with torch.no_grad():
        plain = base(input_ids=ids).logits
    merged = PeftModel.from_pretrained(base, str(out)).eval()
    with torch.no_grad():
        logits = merged(input_ids=ids).logits
    assert torch.isfinite(logits).all()
    assert not torch.allclose(logits, plain)  # the merged adapter changes the model


def test_merge_rejects_mismatched_weights(tiny_model: Path, adapters: list[Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="weights"):
        merge_adapters(tiny_model, adapters, tmp_path / "x", weights=[1.0])
