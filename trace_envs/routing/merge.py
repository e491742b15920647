"""Consolidation baseline: merge capability adapters into one with PEFT's ``add_weighted_adapter``.

(The other baseline, one adapter trained on a uniform mixture of capability envs, is
``trace_envs.training.train`` with several ``env_ids``.)
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from trace_envs.training.metadata import AdapterMetadata, load_metadata, save_metadata

CombinationType = Literal[
    "linear",
    "svd",
    "cat",
    "ties",
    "ties_svd",
    "dare_linear",
    "dare_ties",
    "dare_linear_svd",
    "dare_ties_svd",
    "magnitude_prune",
    "magnitude_prune_svd",
]
MERGED_NAME = "merged"
_NEEDS_DENSITY = ("ties", "dare", "magnitude")


def merge_adapters(
    base_model: str | Path,
    adapter_dirs: Sequence[str | Path],
    out_dir: str | Path,
    combination_type: CombinationType = "linear",
    weights: Sequence[float] | None = None,
    density: float | None = None,
    svd_rank: int | None = None,
) -> AdapterMetadata:
    """Merge LoRA adapters trained on the same base model into one adapter saved at ``out_dir``.

    Args:
        base_model: The base model the adapters were trained on.
        adapter_dirs: Adapter directories (each with ``trace_adapter.json``).
        out_dir: Where the merged adapter and its metadata go.
        combination_type: PEFT's combination: linear, TIES, DARE and SVD variants.
        weights: One weight per adapter (default: uniform, 1/N each).
        density: Share of values kept (needed by ties/dare/magnitude types; default 0.5 for them).
        svd_rank: Rank of the merged adapter for the ``*_svd`` types (default: the largest input rank).
    """
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    if not adapter_dirs:
        raise ValueError("merge_adapters needs at least one adapter directory")
    metas = [load_metadata(d) for d in adapter_dirs]
    names = [f"a{i}" for i in range(len(adapter_dirs))]
    weights = list(weights) if weights is not None else [1.0 / len(adapter_dirs)] * len(adapter_dirs)
    if len(weights) != len(adapter_dirs):
        raise ValueError(f"{len(weights)} weights for {len(adapter_dirs)} adapters")
    if density is None and any(key in combination_type for key in _NEEDS_DENSITY):
        density = 0.5
    model = AutoModelForCausalLM.from_pretrained(str(base_model))
    peft_model = PeftModel.from_pretrained(model, str(adapter_dirs[0]), adapter_name=names[0])
    for name, directory in zip(names[1:], adapter_dirs[1:], strict=True):
        peft_model.load_adapter(str(directory), adapter_name=name)
    peft_model.add_weighted_adapter(
        adapters=names,
        weights=weights,
        adapter_name=MERGED_NAME,
        combination_type=combination_type,
        svd_rank=svd_rank,
        density=density,
    )
    for name in names:
        peft_model.delete_adapter(name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(out), selected_adapters=[MERGED_NAME])
    nested = out / MERGED_NAME  # PEFT saves a non-default adapter in a subfolder named after it
    if nested.is_dir():
        for item in nested.iterdir():
            shutil.move(str(item), str(out / item.name))
        nested.rmdir()
    meta = AdapterMetadata(
        capability=f"merged_{combination_type}",
        description="Merge of: " + "; ".join(f"{m.capability}: {m.description}" for m in metas),
        env_ids=[e for m in metas for e in m.env_ids],
        base_model=str(base_model),
        config={
            "combination_type": combination_type,
            "weights": weights,
            "density": density,
            "svd_rank": svd_rank,
            "adapters": [str(d) for d in adapter_dirs],
        },
        status="merged",
        example=metas[0].example,
        versions=metas[0].versions,
    )
    save_metadata(out, meta)
    return meta
