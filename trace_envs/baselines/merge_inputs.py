"""The adapters a merge takes: checked to be mergeable (one base model, the same LoRA layers) and counted
in rollouts, all before any model is loaded; every problem is one line naming the fix."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_envs.training.metadata import METADATA_FILE, AdapterMetadata, load_metadata

from .record import BASELINE_FILE, load_baseline_run

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
_LORA_SUFFIXES = (".lora_A.weight", ".lora_B.weight")


class MergeInputError(ValueError):
    """A merge input or option that cannot work, said in one line (the command exits 2 with it)."""


@dataclass(frozen=True)
class MergeInput:
    """One adapter to merge: where it is, its trace metadata and PEFT config, its LoRA layers, its rollouts."""

    path: Path
    meta: AdapterMetadata
    peft_config: dict[str, Any]
    modules: frozenset[str]
    rollouts: int
    smallest_dim: int
    """The smallest input or output size among its adapted layers (a merged rank cannot exceed it)."""

    @property
    def rank(self) -> int:
        return int(self.peft_config["r"])


def adapter_rollouts(path: Path, meta: AdapterMetadata) -> int:
    """Rollouts an adapter cost: its ``baseline.json`` when a baseline wrote it, the count a merge recorded,
    or training steps done x rollouts per step (G x K, as ``TrainConfig.rollout_budget`` counts them)."""
    from pydantic import ValidationError

    from trace_envs.training.config import TrainConfig

    if (path / BASELINE_FILE).is_file():
        return load_baseline_run(path).rollouts_used
    if meta.status == "merged" and isinstance(meta.config.get("rollouts_used"), int):
        return int(meta.config["rollouts_used"])
    if "max_steps" not in meta.config:
        raise MergeInputError(
            f"--adapter {path}: {METADATA_FILE} records no training run (config.max_steps and the batch sizes), "
            "so its rollouts cannot be counted; merge adapters written by `trace-envs train` or a baseline"
        )
    try:
        config = TrainConfig.model_validate(meta.config)
    except ValidationError as exc:
        from trace_envs.problems import validation_problems

        raise MergeInputError(
            f"--adapter {path}: {METADATA_FILE} config is not a training config ({validation_problems(exc)}), "
            "so its rollouts cannot be counted"
        ) from None
    return meta.steps_done * config.rollouts_per_step


def _lora_layers(path: Path) -> tuple[frozenset[str], int]:
    """Names of the layers the adapter's weights adapt (``….q_proj`` for ``….q_proj.lora_A.weight``) and
    the smallest layer size among them (A is r x d_in, B is d_out x r), read without loading the tensors."""
    from safetensors import safe_open

    modules, sizes = set(), []
    with safe_open(str(path / ADAPTER_WEIGHTS), framework="pt") as handle:
        for key in handle.keys():  # noqa: SIM118 (a safetensors handle is not a dict)
            for suffix, axis in zip(_LORA_SUFFIXES, (1, 0), strict=True):
                if key.endswith(suffix):
                    modules.add(key.removesuffix(suffix))
                    sizes.append(int(handle.get_slice(key).get_shape()[axis]))
    return frozenset(modules), min(sizes, default=0)


def read_input(directory: str | Path) -> MergeInput:
    """One adapter directory, checked: it exists and holds a PEFT LoRA adapter and ``trace_adapter.json``."""
    path = Path(directory)
    if not path.is_dir():
        raise MergeInputError(f"--adapter {path}: no such directory")
    for name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS, METADATA_FILE):
        if not (path / name).is_file():
            raise MergeInputError(
                f"--adapter {path}: no {name} in it; pass an adapter directory written by `trace-envs train`"
            )
    from pydantic import ValidationError

    try:
        peft_config = json.loads((path / ADAPTER_CONFIG).read_text(encoding="utf-8"))
        meta = load_metadata(path)
    except (json.JSONDecodeError, ValidationError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise MergeInputError(f"--adapter {path}: unreadable {ADAPTER_CONFIG} or {METADATA_FILE} ({first})") from None
    if peft_config.get("peft_type") != "LORA":
        raise MergeInputError(f"--adapter {path}: a {peft_config.get('peft_type')} adapter, not LoRA")
    if peft_config.get("use_dora"):
        raise MergeInputError(f"--adapter {path}: a DoRA adapter; these merges take plain LoRA adapters")
    modules, smallest_dim = _lora_layers(path)
    if not modules:
        raise MergeInputError(f"--adapter {path}: {ADAPTER_WEIGHTS} holds no lora_A/lora_B weights")
    return MergeInput(path, meta, peft_config, modules, adapter_rollouts(path, meta), smallest_dim)


def _same_model(one: str, other: str) -> bool:
    """Two model names are the same model: equal ids, or local paths to one directory."""
    if one == other:
        return True
    first, second = Path(one).expanduser(), Path(other).expanduser()
    return first.exists() and second.exists() and first.resolve() == second.resolve()


def _module_names(modules: frozenset[str]) -> str:
    names = sorted({module.rsplit(".", 1)[-1] for module in modules})
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def read_inputs(directories: Sequence[str | Path], model: str) -> list[MergeInput]:
    """The adapters to merge, checked against each other and ``model``: at least two, one base model, the
    same LoRA layers (a layer only one adapter has would be merged with nothing)."""
    if len(directories) < 2:
        raise MergeInputError("give at least two --adapter DIR to merge")
    inputs = [read_input(directory) for directory in directories]
    first = inputs[0]
    for other in inputs[1:]:
        if not _same_model(other.meta.base_model, first.meta.base_model):
            raise MergeInputError(
                f"--adapter {other.path} was trained on {other.meta.base_model} but {first.path} on "
                f"{first.meta.base_model}: merge adapters of one base model"
            )
        if other.modules != first.modules:
            only_first, only_other = first.modules - other.modules, other.modules - first.modules
            raise MergeInputError(
                f"--adapter {first.path} and {other.path} adapt different modules "
                f"({first.path.name} only: {_module_names(only_first) or 'none'}; "
                f"{other.path.name} only: {_module_names(only_other) or 'none'}): "
                "merge adapters trained with the same LoRA targets"
            )
    if not _same_model(model, first.meta.base_model):
        raise MergeInputError(
            f"--model {model} but the adapters were trained on {first.meta.base_model}: pass --model "
            f"{first.meta.base_model}"
        )
    return inputs


def check_budget(inputs: Sequence[MergeInput], budget: int | None) -> int:
    """Rollouts the inputs spent in all; more than ``budget`` is refused, naming each adapter's count."""
    used = sum(item.rollouts for item in inputs)
    if budget is not None and used > budget:
        each = ", ".join(f"{item.path.name}: {item.rollouts}" for item in inputs)
        raise MergeInputError(
            f"the adapters spent {used} rollouts ({each}), more than --budget {budget}: raise the budget to at "
            f"least {used} or merge adapters trained on fewer rollouts"
        )
    return used
