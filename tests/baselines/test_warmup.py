"""The warm-up on a flawed policy's stored episodes: trains on its successes only, merges the LoRA into an
ordinary model folder, and a rerun returns the record without training again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trace_envs.baselines.sft_synthetic import SFTSettings
from trace_envs.baselines.warmup import WARMUP_FILE, warmup_on_episodes
from trace_envs.rollout import iter_episodes

from .conftest import CHECKS

pytestmark = pytest.mark.train
ENV = "trace/order-cancel-v0"


def test_warmup_on_flawed_episodes_merges_into_a_model_folder(tiny_model: Path, tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    out = tmp_path / "warm"
    policy = f"flawed:{CHECKS}"
    settings = SFTSettings(policy=policy, max_steps=2, batch_size=2, concurrency=2)
    record = warmup_on_episodes(tiny_model, [ENV], out, policy=policy, episodes=6, settings=settings)
    episodes = list(iter_episodes(out / "episodes" / "rollouts.jsonl"))
    assert len(episodes) == record.episodes == 6
    successes = [e for e in episodes if e.success]
    assert 0 < record.trained_on == len(successes) < 6  # the flawed policy fails where the order is not pending
    assert all(not any("get_order_details" in a for a in e.actions) for e in episodes)  # it never checks
    assert record.steps == 2 and record.final_loss is not None
    warmed = AutoModelForCausalLM.from_pretrained(str(out))  # merged: no adapter folder needed
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model))
    changed = any(not torch.equal(a, b) for a, b in zip(warmed.parameters(), base.parameters(), strict=True))
    assert changed
    assert not (out / "adapter_config.json").exists()
    assert json.loads((out / WARMUP_FILE).read_text(encoding="utf-8"))["policy"] == policy
    again = warmup_on_episodes(tiny_model, [ENV], out, policy=policy, episodes=6, settings=settings)
    assert again == record


def test_reference_episodes_are_mixed_in_on_later_seeds(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "warm"
    policy = f"flawed:{CHECKS}"
    settings = SFTSettings(policy=policy, max_steps=1, batch_size=2, concurrency=2)
    record = warmup_on_episodes(
        tiny_model, [ENV], out, policy=policy, episodes=4, settings=settings, reference_episodes=3
    )
    flawed = list(iter_episodes(out / "episodes" / "rollouts.jsonl"))
    reference = list(iter_episodes(out / "episodes-reference" / "rollouts.jsonl"))
    # the store is written in completion order (two episodes run at once); training reads it in job order
    assert sorted(e.seed for e in reference) == [4, 5, 6]  # after the flawed policy's seeds 0..3
    assert all(e.success for e in reference)
    assert any(any("get_order_details" in a for a in e.actions) for e in reference)  # the reference checks
    assert record.reference_episodes == 3
    assert record.trained_on == sum(e.success for e in flawed) + 3
