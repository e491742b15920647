"""TrainConfig: the paper's defaults, YAML loading, clear errors, TRL GRPOConfig mapping (vLLM included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.training import TrainConfig, load_config


def test_defaults_are_the_papers() -> None:
    config = TrainConfig()
    assert config.lora.target_modules == "paper" and (config.lora.r, config.lora.alpha) == (16, 16)
    assert config.lora.peft_target_modules() == [
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"
    ]  # fmt: skip
    assert config.learning_rate == 1e-5
    assert config.max_steps == 40
    assert config.temperature == 1.0
    assert (config.num_generations, config.groups_per_step) == (16, 8)
    assert config.rollout_budget == 5120  # the paper's scaling budget: 40 iterations x 8 groups x 16
    assert (config.per_device_train_batch_size, config.gradient_accumulation_steps) == (16, 8)
    assert config.constant_groups == "drop" and config.hint_share == 0.0
    kwargs = config.grpo_kwargs("out", max_tool_calling_iterations=12, use_cpu=True)
    assert kwargs["optim"] == "adamw_torch" and kwargs["learning_rate"] == 1e-5
    assert kwargs["max_tool_calling_iterations"] == 12
    assert kwargs["remove_unused_columns"] is False  # or the seed column never reaches reset()
    assert "use_vllm" not in kwargs and kwargs["bf16"] is False
    assert kwargs["scale_rewards"] == "group" and kwargs["importance_sampling_level"] == "token"
    assert kwargs["loss_type"] == "grpo" and kwargs["steps_per_generation"] == 8


def test_switches_reach_trls_config() -> None:
    trl = pytest.importorskip("trl")
    config = TrainConfig(
        scale_rewards="none",
        importance_sampling_level="sequence",
        loss_type="dapo",
        groups_per_step=4,
        num_generations=8,
    )
    args = trl.GRPOConfig(**config.grpo_kwargs("out", max_tool_calling_iterations=4, use_cpu=True))
    assert args.scale_rewards == "none" and args.importance_sampling_level == "sequence" and args.loss_type == "dapo"
    # one generation batch of G x K rollouts per optimiser step, in micro-batches of K
    assert args.generation_batch_size == 32 and args.steps_per_generation == args.gradient_accumulation_steps == 4
    assert args.per_device_train_batch_size == 8 and args.num_generations == 8


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, (8, 16, 8)),  # G, micro-batch, accumulation
        ({"groups_per_step": 2, "num_generations": 4}, (2, 4, 2)),
        ({"groups_per_step": 4, "num_generations": 4, "per_device_train_batch_size": 8}, (4, 8, 2)),
        ({"num_generations": 4, "per_device_train_batch_size": 8}, (2, 8, 1)),  # configs written before G
        ({"num_generations": 2, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 3}, (3, 2, 3)),
    ],
)
def test_groups_and_micro_batches_derive_from_what_is_given(
    given: dict[str, int], expected: tuple[int, int, int]
) -> None:
    config = TrainConfig(**given)
    assert (config.groups_per_step, config.per_device_train_batch_size, config.gradient_accumulation_steps) == expected
    assert config.rollouts_per_step == config.groups_per_step * config.num_generations
    assert config.rollout_budget == config.max_steps * config.groups_per_step * config.num_generations


def test_lora_targets_presets_and_lists() -> None:
    assert TrainConfig(lora={"target_modules": "qkvo"}).lora.peft_target_modules() == [
        "q_proj", "k_proj", "v_proj", "o_proj"
    ]  # fmt: skip
    assert TrainConfig(lora={"target_modules": ["q_proj"]}).lora.peft_target_modules() == ["q_proj"]
    assert TrainConfig(lora={"target_modules": "all-linear"}).lora.peft_target_modules() == "all-linear"
    with pytest.raises(ValueError, match=r"lora.target_modules.*unknown preset 'qkv'"):
        load_config(lora={"target_modules": "qkv"})


def test_the_peft_config_every_trainer_builds_has_the_preset_expanded() -> None:
    pytest.importorskip("peft")
    lora = TrainConfig(lora={"target_modules": "qkvo", "r": 8, "alpha": 4, "dropout": 0.1}).lora.peft_config()
    assert lora.target_modules == {"q_proj", "k_proj", "v_proj", "o_proj"}  # a preset name never reaches PEFT
    assert (lora.r, lora.lora_alpha, lora.lora_dropout, lora.task_type) == (8, 4, 0.1, "CAUSAL_LM")


def test_inconsistent_or_out_of_range_switches_are_named() -> None:
    with pytest.raises(ValueError, match="groups_per_step \\* num_generations"):
        load_config(groups_per_step=3, num_generations=4, per_device_train_batch_size=4, gradient_accumulation_steps=2)
    with pytest.raises(ValueError, match="constant_groups"):
        load_config(constant_groups="skip")
    with pytest.raises(ValueError, match="hint_share"):
        load_config(hint_share=1.0)
    assert TrainConfig(hint_share=0.25).hinted_per_group == 4  # 4 of 16, the authors' lower end
    assert TrainConfig(hint_share=0.9, num_generations=2, per_device_train_batch_size=2).hinted_per_group == 1


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


def test_processes_share_the_step_so_the_budget_does_not_grow_with_them() -> None:
    config = TrainConfig(num_generations=16, groups_per_step=8)  # micro-batch K = 16, 8 micro-batches
    for world, accumulation in ((1, 8), (2, 4), (4, 2), (8, 1)):
        kwargs = config.grpo_kwargs("out", max_tool_calling_iterations=4, use_cpu=True, world_size=world)
        assert kwargs["gradient_accumulation_steps"] == kwargs["steps_per_generation"] == accumulation
        # TRL's generation batch: micro-batch x processes x steps per generation = the world's G x K
        assert kwargs["per_device_train_batch_size"] * world * accumulation == config.rollouts_per_step == 128
    assert config.rollout_budget == 40 * 8 * 16  # whatever the number of processes
    with pytest.raises(ValueError, match=r"make groups_per_step \(--groups-per-step\) a multiple of 16"):
        config.accumulation_per_process(16)
    with pytest.raises(ValueError, match="a multiple of 3"):
        TrainConfig(num_generations=2, groups_per_step=2).accumulation_per_process(3)


def test_a_training_config_file_names_every_problem_and_each_unknown_key(tmp_path: Path) -> None:
    path = tmp_path / "grpo.yaml"
    path.write_text("max_steps: 0\nscale_reward: none\nlearning_rate: fast\n", encoding="utf-8")
    with pytest.raises(ValueError, match="invalid training config") as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: invalid training config: ") and "more" not in message
    assert "max_steps: Input should be greater than or equal to 1" in message
    assert "learning_rate: Input should be a valid number" in message
    assert "scale_reward: Extra inputs are not permitted (unknown key 'scale_reward'" in message
    assert "allowed here: env_ids," in message and "scale_rewards" in message
