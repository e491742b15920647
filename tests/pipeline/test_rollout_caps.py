"""The rollout section caps an episode's turns and a model's answer, as the evaluate section does: a real
model's rollout on the device target would otherwise run up to the env's 30 turns of 256 tokens each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trace_envs.pipeline.config import parse_config
from trace_envs.pipeline.data_stages import store_path
from trace_envs.pipeline.runner import run_pipeline
from trace_envs.rollout.store import load_episodes


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


def rollout_config(**rollout: Any) -> Any:
    data = {
        "targets": ["device"],
        "rollout": {"policy": "oracle", "max_tasks": 2, "split": "train", "concurrency": 1, **rollout},
        "train": {"model": "tiny"},
    }
    return parse_config(data, "the test config")


def test_max_steps_ends_each_episode_after_that_many_turns(tmp_path: Path) -> None:
    run_pipeline(rollout_config(), tmp_path / "free", only="rollout")
    free = load_episodes(store_path(tmp_path / "free" / "rollout", "device"))
    run_pipeline(rollout_config(max_steps=1), tmp_path / "capped", only="rollout")
    capped = load_episodes(store_path(tmp_path / "capped" / "rollout", "device"))

    assert len(free) == len(capped) == 2
    assert all(len(e.actions) > 1 for e in free), "the reference solutions take more than one turn"
    assert all(len(e.actions) == 1 and e.ended == "max_steps" for e in capped)


def test_max_tokens_caps_each_model_answer(tiny_model: Path, tmp_path: Path) -> None:
    run_pipeline(rollout_config(policy=f"hf:{tiny_model}", max_steps=2, max_tokens=3), tmp_path, only="rollout")
    episodes = load_episodes(store_path(tmp_path / "rollout", "device"))

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    answers = [m["content"] for e in episodes for m in e.messages if m["role"] == "assistant"]
    assert answers, "the model answered"
    assert all(len(tokenizer(text, add_special_tokens=False)["input_ids"]) <= 3 for text in answers)
