"""TrainConfig: the paper's defaults, YAML loading, clear errors, TRL GRPOConfig mapping (vLLM included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.training import TrainConfig, load_config


def test_defaults_are_the_papers() -> None:
    config = TrainConfig()
    assert config.lora.target_modules == "all-linear"
    assert config.learning_rate == 1e-5
    assert config.max_steps == 40
    assert config.temperature == 1.0
    kwargs = config.grpo_kwargs("out", max_tool_calling_iterations=12, use_cpu=True)
    assert kwargs["optim"] == "adamw_torch" and kwargs["learning_rate"] == 1e-5
    assert kwargs["max_tool_calling_iterations"] == 12
    assert kwargs["remove_unused_columns"] is False  # or the seed column never reaches reset()
    assert "use_vllm" not in kwargs and kwargs["bf16"] is False


def test_yaml_with_overrides(tmp_path: Path) -> None:
    path = tmp_path / "grpo.yaml"
    path.write_text("env_ids: [trace/order-cancel-v0]\nmax_steps: 7\nlora:\n  r: 8\ngeneration: vllm-server\n")
    config = load_config(path, max_steps=3, learning_rate=None)
    assert config.max_steps == 3 and config.lora.r == 8 and config.env_ids == ["trace/order-cancel-v0"]
    assert config.learning_rate == 1e-5


def test_bad_fields_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("max_step: 3\n")
    with pytest.raises(ValueError, match="max_step"):
        load_config(path)
    with pytest.raises(ValueError, match="num_generations"):
        load_config(num_generations=3, per_device_train_batch_size=4)
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "missing.yaml")


@pytest.mark.parametrize("mode", ["vllm-server", "vllm-colocate"])
def test_vllm_modes_map_onto_trl(mode: str) -> None:
    trl = pytest.importorskip("trl")
    config = TrainConfig(generation=mode, vllm={"server_base_url": "http://10.0.0.5:8000", "tensor_parallel_size": 2})
    kwargs = config.grpo_kwargs("out", max_tool_calling_iterations=30, use_cpu=False)
    assert kwargs["use_vllm"] is True and kwargs["vllm_mode"] == mode.removeprefix("vllm-")
    if mode == "vllm-server":
        assert kwargs["vllm_server_base_url"] == "http://10.0.0.5:8000"
    else:
        assert kwargs["vllm_tensor_parallel_size"] == 2
    fields = set(trl.GRPOConfig.__dataclass_fields__)
    assert set(kwargs) <= fields, f"not GRPOConfig fields: {sorted(set(kwargs) - fields)}"
