"""The ``merge`` baseline: consolidate capability adapters into one LoRA adapter (paper Table 3).

Methods: ``linear``, ``ties``, ``dare-linear`` and ``dare-ties`` through PEFT's ``add_weighted_adapter``
on the delta-W of each layer, and ``core-tsv`` (:mod:`.core_tsv`, ours, with its TIES step switchable).
Every result is a PEFT adapter directory that ``PeftModel.from_pretrained`` loads, with
``trace_adapter.json`` (status ``merged``) and ``baseline.json`` (rollouts = what the inputs spent).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from trace_envs.training.metadata import AdapterMetadata, save_metadata

from .merge_inputs import ADAPTER_WEIGHTS, MergeInput, MergeInputError, check_budget, read_inputs
from .record import BaselineRun, save_baseline_run

Method = Literal["linear", "ties", "dare-linear", "dare-ties", "core-tsv"]
METHODS: tuple[str, ...] = get_args(Method)
PEFT_COMBINATION = {"ties": "ties_svd", "dare-linear": "dare_linear_svd", "dare-ties": "dare_ties_svd"}
"""PEFT's delta-W variants: TIES and DARE act on each layer's B @ A, then an SVD gives the rank. (PEFT's
plain ``ties``/``dare_*`` act on A and B separately, which is not TIES on the task vector.)"""
AVERAGING = ("ties", "dare-ties", "core-tsv")
"""Methods that average inside (disjoint mean, isotropic mean): weight 1 each by default; the others sum,
so they default to 1/N each."""
DEFAULT_DENSITY = 0.5
MERGED_NAME = "merged"


@dataclass(frozen=True)
class MergeSettings:
    """A merge's resolved options (defaults filled in), as recorded in the outputs."""

    method: Method
    weights: list[float]
    density: float | None
    rank: int | None
    ties: bool
    seed: int

    def record(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "weights": self.weights,
            "density": self.density,
            "rank": self.rank,
            "ties": self.ties,
            "seed": self.seed,
        }


def resolve_settings(
    method: str,
    count: int,
    weights: Sequence[float] | None,
    density: float | None,
    rank: int | None,
    ties: bool | None,
    seed: int,
    max_rank: int,
    max_size: int,
) -> MergeSettings:
    """Check the options against the method and fill in its defaults; a wrong one is a :class:`MergeInputError`."""
    if method not in METHODS:
        raise MergeInputError(f"--method {method!r} is not one of {', '.join(METHODS)}")
    if weights is None:
        weights = [1.0] * count if method in AVERAGING else [1.0 / count] * count
    if len(weights) != count:
        raise MergeInputError(f"--weights gives {len(weights)} weights for {count} adapters: give one per --adapter")
    if not all(math.isfinite(w) for w in weights):
        raise MergeInputError("--weights must be finite numbers")
    if ties is not None and method != "core-tsv":
        raise MergeInputError(
            "--ties/--no-ties switches core-tsv's TIES step; for the others pick ties, dare-ties or linear, dare-linear"
        )
    use_ties = method in ("ties", "dare-ties") or (method == "core-tsv" and ties is not False)
    prunes = use_ties or method == "dare-linear"
    if density is not None and not prunes:
        raise MergeInputError(
            f"--density is the TIES/DARE trim density; --method {method} without TIES does not use it"
        )
    if density is not None and not 0.0 < density <= 1.0:
        raise MergeInputError(f"--density {density} is outside (0, 1]: it is the share of entries kept")
    if rank is not None and not 1 <= rank <= max_size:
        raise MergeInputError(f"--rank {rank} must be between 1 and {max_size}, the smallest adapted layer size")
    if rank is None and method != "linear":
        rank = max_rank  # linear without --rank is exact (rank = sum of the input ranks)
    return MergeSettings(
        method=method,  # type: ignore[arg-type]
        weights=[float(w) for w in weights],
        density=(DEFAULT_DENSITY if density is None else density) if prunes else None,
        rank=rank,
        ties=use_ties,
        seed=seed,
    )


def merge_adapters(
    model: str | Path,
    adapter_dirs: Sequence[str | Path],
    out_dir: str | Path,
    method: str = "core-tsv",
    weights: Sequence[float] | None = None,
    density: float | None = None,
    rank: int | None = None,
    ties: bool | None = None,
    seed: int = 0,
    budget: int | None = None,
) -> BaselineRun:
    """Merge LoRA adapters of one base model into one adapter at ``out_dir``; returns its ``baseline.json``.

    Args:
        model: The base model (loaded for the PEFT methods; core-tsv works on the adapter files alone).
        adapter_dirs: Two or more adapter directories, each with ``trace_adapter.json``.
        out_dir: New directory for the merged adapter, its metadata and ``baseline.json``.
        method: linear, ties, dare-linear, dare-ties or core-tsv.
        weights: One per adapter (default 1 each for averaging methods, 1/N for summing ones).
        density: Share of entries TIES/DARE keep (default 0.5).
        rank: Rank of the result (default: the largest input rank; linear without it is exact).
        ties: core-tsv only: run its TIES step (default on, as in the paper; off is the repo's code).
        seed: Seeds DARE's random drops (in a forked torch RNG, so the global one is untouched).
        budget: Rollout budget; inputs that spent more are refused.
    """
    inputs = read_inputs(adapter_dirs, str(model))
    used = check_budget(inputs, budget)
    settings = resolve_settings(
        method,
        len(inputs),
        weights,
        density,
        rank,
        ties,
        seed,
        max_rank=max(item.rank for item in inputs),
        max_size=min(item.smallest_dim for item in inputs),
    )
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeInputError(f"--out {out} exists and is not an empty directory: choose a new one")
    scalings = [_scaling(item.peft_config, item.path) for item in inputs] if settings.method == "core-tsv" else []
    resolved = out.resolve()
    work = resolved.with_name(f".{resolved.name}.merging")  # renamed to --out once complete
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        run = _merge_into(work, inputs, scalings, settings, str(model), used, budget)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if out.exists():
        out.rmdir()
    work.replace(out)
    return run


def _merge_into(
    work: Path,
    inputs: Sequence[MergeInput],
    scalings: Sequence[float],
    settings: MergeSettings,
    model: str,
    used: int,
    budget: int | None,
) -> BaselineRun:
    """Write the merged adapter, ``trace_adapter.json`` and ``baseline.json`` into ``work``."""
    if settings.method == "core-tsv":
        final_rank = _core_tsv(inputs, scalings, settings, model, work)
    else:
        final_rank = _peft_merge(inputs, settings, model, work)
    record = settings.record() | {
        "rank": final_rank,
        "adapters": [str(item.path) for item in inputs],
        "rollouts": {str(item.path): item.rollouts for item in inputs},
        "rollouts_used": used,
    }
    metas = [item.meta for item in inputs]
    env_ids = list(dict.fromkeys(e for m in metas for e in m.env_ids))
    save_metadata(
        work,
        AdapterMetadata(
            capability="merged_" + settings.method.replace("-", "_"),
            description="Merge of: " + "; ".join(f"{m.capability}: {m.description}" for m in metas),
            env_ids=env_ids,
            base_model=metas[0].base_model,
            config=record,
            status="merged",
            example=metas[0].example,
            versions=metas[0].versions,
        ),
    )
    run = BaselineRun(
        method="merge",
        env_ids=env_ids,
        base_model=model,
        budget=budget,
        rollouts_used=used,
        artifact=".",
        config=record,
    )
    save_baseline_run(work, run)
    return run


def _peft_merge(inputs: Sequence[MergeInput], settings: MergeSettings, model: str, out: Path) -> int:
    """linear / ties / dare-* with PEFT's ``add_weighted_adapter``; returns the rank written."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    with torch.random.fork_rng(devices=[]):  # loading, LoRA init and DARE's drops; the caller's RNG is untouched
        torch.manual_seed(settings.seed)
        combination = PEFT_COMBINATION.get(settings.method, "cat" if settings.rank is None else "svd")
        names = [f"a{i}" for i in range(len(inputs))]
        base = AutoModelForCausalLM.from_pretrained(model)
        peft_model = PeftModel.from_pretrained(base, str(inputs[0].path), adapter_name=names[0])
        for name, item in zip(names[1:], inputs[1:], strict=True):
            peft_model.load_adapter(str(item.path), adapter_name=name)
        peft_model.add_weighted_adapter(
            adapters=names,
            weights=settings.weights,
            adapter_name=MERGED_NAME,
            combination_type=combination,
            svd_rank=settings.rank,
            density=settings.density,
            svd_full_matrices=False,
        )
        for name in names:
            peft_model.delete_adapter(name)
        peft_model.save_pretrained(str(out), selected_adapters=[MERGED_NAME])
        nested = out / MERGED_NAME  # PEFT saves a non-default adapter in a subfolder named after it
        for entry in nested.iterdir():
            shutil.move(str(entry), str(out / entry.name))
        nested.rmdir()
        return int(peft_model.peft_config[MERGED_NAME].r)


def _scaling(config: dict[str, Any], path: Path) -> float:
    """PEFT's LoRA scaling of an adapter (alpha / r, or alpha / sqrt(r) with rsLoRA)."""
    if config.get("rank_pattern") or config.get("alpha_pattern"):
        raise MergeInputError(f"--adapter {path}: per-layer rank_pattern/alpha_pattern is not supported by core-tsv")
    rank, alpha = int(config["r"]), float(config["lora_alpha"])
    return alpha / math.sqrt(rank) if config.get("use_rslora") else alpha / rank


def _core_tsv(
    inputs: Sequence[MergeInput], scalings: Sequence[float], settings: MergeSettings, model: str, out: Path
) -> int:
    """CORE-TSV layer by layer from the adapter files; writes the PEFT weights and config; returns the rank."""
    from dataclasses import replace

    from peft import LoraConfig
    from safetensors.torch import load_file, save_file

    from .core_tsv import core_tsv_layer

    assert settings.rank is not None
    tensors = [load_file(str(item.path / ADAPTER_WEIGHTS)) for item in inputs]
    dtype = tensors[0][f"{sorted(inputs[0].modules)[0]}.lora_A.weight"].dtype
    merged = {}
    for module in sorted(inputs[0].modules):
        a, b = core_tsv_layer(
            [t[f"{module}.lora_A.weight"] * s for t, s in zip(tensors, scalings, strict=True)],
            [t[f"{module}.lora_B.weight"] for t in tensors],
            settings.weights,
            settings.rank,
            ties_density=settings.density if settings.ties else None,
        )
        merged[f"{module}.lora_A.weight"] = a.to(dtype).contiguous()
        merged[f"{module}.lora_B.weight"] = b.to(dtype).contiguous()
    save_file(merged, str(out / ADAPTER_WEIGHTS), metadata={"format": "pt"})
    config = LoraConfig.from_pretrained(str(inputs[0].path))
    config = replace(
        config,
        r=settings.rank,
        lora_alpha=settings.rank,
        use_rslora=False,
        rank_pattern={},
        alpha_pattern={},
        base_model_name_or_path=model,
    )
    config.save_pretrained(str(out))
    return settings.rank
