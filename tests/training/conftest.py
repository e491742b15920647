"""Fixtures for the training tests: one torch thread, a tiny offline model, the code-letter env."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen3 model (built offline, about a second)."""
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


@pytest.fixture(scope="session")
def word_env_id() -> str:
    from .word_env import register

    return register()


Script = Callable[[int, list[str]], list[str]]
"""``script(call, prompts)``: the text each rollout generates at the ``call``-th generation call, given the
decoded prompts of that call."""


@pytest.fixture
def scripted() -> Callable[[Any, Script], list[list[str]]]:
    """Replace a trainer's sampling with scripted turns; returns the decoded prompts of every call."""

    def install(trainer: Any, script: Script) -> list[list[str]]:
        tokenizer = trainer.processing_class
        seen: list[list[str]] = []

        def generate(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
            prompts = [tokenizer.decode(ids) for ids in prompt_ids]
            texts = script(len(seen), prompts)
            seen.append(prompts)
            return [list(tokenizer(t + "<|im_end|>", add_special_tokens=False)["input_ids"]) for t in texts], None

        trainer._generate_single_turn = generate
        return seen

    return install


def asked_letter(prompt: str) -> str:
    """The code letter the word env's user asks for in a decoded prompt."""
    return prompt.rsplit("Please tell me the code letter ", 1)[1][0]
