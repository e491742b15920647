"""Fixtures for the baseline tests that train: one torch thread, a tiny offline model, the CLI app."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen3 model (built offline, about a second)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    torch.set_num_threads(1)
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


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
