"""Fixtures for the baseline tests: one torch thread, a tiny offline model, the CLI app, and small LoRA adapters
with a training record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

DATES, CHECKS, NARROW = "datetime_reasoning", "precondition_verification", "tool_calling_precision"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen3 model (built offline, about a second)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    from trace_envs.llm.tiny_model import build_tiny_model

    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


def _adapter(
    tiny_model: Path,
    path: Path,
    capability: str,
    seed: int,
    rank: int,
    alpha: int,
    targets: str | list[str],
    steps: int,
) -> Path:
    """A randomly initialised (non-zero) LoRA adapter whose metadata says it trained ``steps`` x 4 rollouts."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from trace_envs.training import AdapterMetadata, EpisodeExample, save_metadata
    from trace_envs.training.config import TrainConfig

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model))
    lora = LoraConfig(r=rank, lora_alpha=alpha, target_modules=targets, init_lora_weights=False, task_type="CAUSAL_LM")
    get_peft_model(base, lora).save_pretrained(str(path))
    env_id = f"trace/{capability}-v0"
    config = TrainConfig(env_ids=[env_id], max_steps=steps, num_generations=2, per_device_train_batch_size=4)
    save_metadata(
        path,
        AdapterMetadata(
            capability=capability,
            description=f"Exercise {capability.replace('_', ' ')}.",
            env_ids=[env_id],
            base_model=str(tiny_model),
            config=config.model_dump(mode="json"),
            status="complete",
            steps_done=steps,
            example=EpisodeExample(env_id=env_id, seed=0, reward=1.0, source="oracle", transcript="user: hi"),
        ),
    )
    return path


@pytest.fixture(scope="session")
def adapters(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three adapters: two on all linear layers (rank 2 alpha 4, 8 rollouts; rank 4 alpha 4, 12 rollouts)
    and one on q/v only (for the different-targets check)."""
    root = tmp_path_factory.mktemp("adapters")
    return {
        DATES: _adapter(tiny_model, root / "dates", DATES, 1, 2, 4, "all-linear", 2),
        CHECKS: _adapter(tiny_model, root / "checks", CHECKS, 2, 4, 4, "all-linear", 3),
        NARROW: _adapter(tiny_model, root / "narrow", NARROW, 3, 2, 2, ["q_proj", "v_proj"], 1),
    }


@pytest.fixture(scope="module")
def cli() -> Any:
    from trace_envs.cli import build_app

    return build_app()


def loads_with_peft(model: Path, adapter: Path) -> Any:
    """The base model with the adapter loaded by PEFT (fails if the adapter is not a PEFT adapter of it)."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(model))
    return PeftModel.from_pretrained(base, str(adapter))
