"""The growing key/value cache of batched decoding: every update returns exactly what concatenation gives, a
step writes into the buffers it already has, and whatever replaced the keys since (rows dropped, positions
trimmed) is taken into new buffers; models whose own cache is not plain keep it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trace_envs.llm.hf_cache import empty_cache, growing_layer_class, plain_layers

pytestmark = pytest.mark.train


def _states(rows: int, positions: int, seed: int) -> tuple[Any, Any]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    keys, values = (torch.randn(rows, 3, positions, 8, generator=generator) for _ in range(2))
    return keys, values


def test_a_growing_layer_returns_what_concatenation_gives_and_writes_in_place() -> None:
    import torch

    layer = growing_layer_class()()
    keys, values = _states(4, 10, seed=0)
    expected_keys, expected_values = keys, values
    layer.update(keys, values)
    buffers = layer._buffers
    for step in range(1, 6):
        new_keys, new_values = _states(4, 1, seed=step)
        expected_keys = torch.cat([expected_keys, new_keys], dim=2)
        expected_values = torch.cat([expected_values, new_values], dim=2)
        got_keys, got_values = layer.update(new_keys, new_values)
        assert torch.equal(got_keys, expected_keys) and torch.equal(got_values, expected_values)
    assert layer._buffers is buffers  # 15 positions fit the first buffers: no step copied the cache
    layer.batch_select_indices(torch.tensor([0, 2]))  # rows leave
    layer.keys, layer.values = layer.keys[:, :, 3:], layer.values[:, :, 3:]  # leading padding dropped
    new_keys, new_values = _states(2, 1, seed=9)
    got_keys, _ = layer.update(new_keys, new_values)
    assert torch.equal(got_keys, torch.cat([expected_keys[[0, 2], :, 3:], new_keys], dim=2))
    assert layer._buffers is not buffers


def test_a_plain_model_gets_growing_layers_and_others_keep_their_own(tiny_model_dir: Path) -> None:
    from transformers import AutoConfig, AutoModelForCausalLM, DynamicCache

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    cache = empty_cache(model)
    assert all(type(layer) is growing_layer_class() for layer in cache.layers)
    config = AutoConfig.from_pretrained(tiny_model_dir)
    config.layer_types = ["sliding_attention"] * config.num_hidden_layers
    config.sliding_window = 16
    sliding = AutoModelForCausalLM.from_config(config)
    own = empty_cache(sliding)
    assert isinstance(own, DynamicCache) and not any(type(layer) is growing_layer_class() for layer in own.layers)
    assert plain_layers(own) is None
