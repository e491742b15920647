"""Fixtures for routing tests: a tiny offline model and two LoRA adapters with trace metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("trl")

torch.set_num_threads(1)

CAPABILITIES = {
    "precondition_verification": "Check that a state-changing request is allowed by policy before acting.",
    "datetime_reasoning": "Compute dates and times correctly, including relative expressions.",
}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


@pytest.fixture(scope="session")
def adapters(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two randomly initialised (non-zero) rank-4 LoRA adapters, each with its trace_adapter.json."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from trace_envs.training import AdapterMetadata, EpisodeExample, save_metadata

    root = tmp_path_factory.mktemp("adapters")
    paths = []
    for index, (name, description) in enumerate(CAPABILITIES.items()):
        torch.manual_seed(index + 1)
        base = AutoModelForCausalLM.from_pretrained(str(tiny_model))
        lora = LoraConfig(
            r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False, task_type="CAUSAL_LM"
        )
        model = get_peft_model(base, lora)
        path = root / name
        model.save_pretrained(str(path))
        example = EpisodeExample(
            env_id="trace/order-cancel-v0", seed=0, reward=1.0, source="oracle", transcript=f"user: help with {name}"
        )
        save_metadata(
            path,
            AdapterMetadata(
                capability=name,
                description=description,
                env_ids=["trace/order-cancel-v0"],
                base_model=str(tiny_model),
                config={},
                status="complete",
                example=example,
            ),
        )
        paths.append(path)
    return paths
