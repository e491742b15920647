"""Training configuration: a pydantic model (loadable from YAML) with the paper's defaults.

Paper (TRACE §4.1, App. A): LoRA on the base model's linear layers, GRPO, AdamW with lr 1e-5, up to
40 iterations per capability, sampling temperature 1.0, K rollouts per group from the same seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Generation = Literal["transformers", "vllm-server", "vllm-colocate"]


class LoraSettings(BaseModel):
    """The LoRA adapter (PEFT ``LoraConfig``)."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=16, ge=1, description="LoRA rank.")
    alpha: int = Field(default=32, ge=1, description="LoRA alpha (scaling = alpha / r).")
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: str | list[str] = Field(default="all-linear", description="'all-linear' or module names.")


class VLLMSettings(BaseModel):
    """vLLM generation on GPUs (TRL's ``use_vllm``); ignored with ``generation: transformers``."""

    model_config = ConfigDict(extra="forbid")

    server_base_url: str | None = Field(default=None, description="e.g. http://10.0.0.5:8000 (server mode).")
    server_host: str = "0.0.0.0"
    server_port: int = 8000
    server_timeout: float = 240.0
    gpu_memory_utilization: float = Field(default=0.3, gt=0.0, le=1.0, description="Colocate mode only.")
    tensor_parallel_size: int = Field(default=1, ge=1, description="Colocate mode only.")
    enable_sleep_mode: bool = False


class TrainConfig(BaseModel):
    """Everything one GRPO run needs besides the model and the output directory."""

    model_config = ConfigDict(extra="forbid")

    env_ids: list[str] = Field(default_factory=list, description="One env, or several for a uniform mixture.")
    env_knobs: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Knobs per env id.")
    lora: LoraSettings = Field(default_factory=LoraSettings)
    learning_rate: float = Field(default=1e-5, gt=0.0, description="AdamW learning rate (paper: 1e-5).")
    weight_decay: float = Field(default=0.0, ge=0.0)
    max_steps: int = Field(default=40, ge=1, description="GRPO iterations (paper: up to 40 per capability).")
    num_generations: int = Field(default=8, ge=2, description="K: rollouts per group, all from one seed.")
    per_device_train_batch_size: int = Field(default=8, ge=1, description="Rollouts per device per micro-batch.")
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    temperature: float = Field(default=1.0, gt=0.0, description="Rollout sampling temperature (paper: 1.0).")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_completion_length: int = Field(default=2048, ge=8, description="Token cap of a whole multi-turn rollout.")
    max_tool_calling_iterations: int | None = Field(
        default=None, ge=1, description="Tool rounds per rollout (default: the env's max_turns)."
    )
    beta: float = Field(default=0.0, ge=0.0, description="KL coefficient (0: no reference model).")
    epsilon: float = Field(default=0.2, gt=0.0, description="PPO clipping threshold.")
    num_seeds: int = Field(default=1000, ge=1, description="Dataset rows (one seed each).")
    first_seed: int = Field(default=0, ge=0)
    generation: Generation = Field(default="transformers", description="Rollout backend.")
    vllm: VLLMSettings = Field(default_factory=VLLMSettings)
    gradient_checkpointing: bool = False
    bf16: bool | None = Field(default=None, description="None: bf16 when a CUDA GPU is present.")
    logging_steps: int = Field(default=1, ge=1)
    save_steps: int = Field(default=10, ge=1, description="Checkpoint every N steps (resume after a kill).")
    seed: int = 0
    router_example: Literal["oracle", "policy"] = Field(
        default="oracle",
        description="Episode saved for the router: the env's reference solution, or the first successful "
        "training rollout (falls back to the oracle). Early rollouts can succeed with junk text.",
    )
    report_to: list[str] = Field(default_factory=list, description="e.g. ['wandb'].")

    @model_validator(mode="after")
    def _check_batch(self) -> TrainConfig:
        if (self.per_device_train_batch_size * self.gradient_accumulation_steps) % self.num_generations:
            raise ValueError(
                f"per_device_train_batch_size * gradient_accumulation_steps "
                f"({self.per_device_train_batch_size} * {self.gradient_accumulation_steps}) must be a multiple of "
                f"num_generations ({self.num_generations}) so that every group of K rollouts is complete"
            )
        if self.generation == "vllm-server" and not self.vllm.server_base_url and not self.vllm.server_host:
            raise ValueError("generation 'vllm-server' needs vllm.server_base_url (or vllm.server_host/port)")
        return self

    @property
    def rollouts_per_step(self) -> int:
        """Rollouts one optimiser step generates on one process: G groups of K (TRL's generation batch)."""
        return self.per_device_train_batch_size * self.gradient_accumulation_steps

    @property
    def groups_per_step(self) -> int:
        """G: groups of K rollouts per optimiser step (each group shares one seed)."""
        return self.rollouts_per_step // self.num_generations

    @property
    def rollout_budget(self) -> int:
        """Rollouts the whole run spends: iterations x G x K (the budget every baseline is matched on)."""
        return self.max_steps * self.rollouts_per_step

    def grpo_kwargs(self, output_dir: str | Path, max_tool_calling_iterations: int, use_cpu: bool) -> dict[str, Any]:
        """Keyword arguments for ``trl.GRPOConfig`` (kept as a dict so it is testable without building one)."""
        bf16 = (not use_cpu) if self.bf16 is None else self.bf16
        kwargs: dict[str, Any] = {
            "output_dir": str(output_dir),
            "learning_rate": self.learning_rate,
            "optim": "adamw_torch",
            "weight_decay": self.weight_decay,
            "lr_scheduler_type": "constant",
            "max_steps": self.max_steps,
            "num_generations": self.num_generations,
            "per_device_train_batch_size": self.per_device_train_batch_size,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_completion_length": self.max_completion_length,
            "max_tool_calling_iterations": self.max_tool_calling_iterations or max_tool_calling_iterations,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "gradient_checkpointing": self.gradient_checkpointing,
            "bf16": bf16,
            "use_cpu": use_cpu,
            "logging_steps": self.logging_steps,
            "save_strategy": "steps",
            "save_steps": self.save_steps,
            "seed": self.seed,
            "report_to": list(self.report_to),
            "remove_unused_columns": False,
            "log_completions": False,
            "disable_tqdm": True,
        }
        if self.generation != "transformers":
            kwargs.update(use_vllm=True, vllm_mode=self.generation.removeprefix("vllm-"))
            if self.generation == "vllm-server":
                kwargs.update(
                    vllm_server_base_url=self.vllm.server_base_url,
                    vllm_server_host=self.vllm.server_host,
                    vllm_server_port=self.vllm.server_port,
                    vllm_server_timeout=self.vllm.server_timeout,
                )
            else:
                kwargs.update(
                    vllm_gpu_memory_utilization=self.vllm.gpu_memory_utilization,
                    vllm_tensor_parallel_size=self.vllm.tensor_parallel_size,
                    vllm_enable_sleep_mode=self.vllm.enable_sleep_mode,
                )
        return kwargs


def load_config(path: str | Path | None = None, **overrides: Any) -> TrainConfig:
    """A :class:`TrainConfig` from a YAML file (optional) with ``overrides`` on top (``None`` values ignored).

    Errors name the file, the field and what was wrong.
    """
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"training config {path} does not exist")
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ValueError(
                f"{path}: a training config is a YAML mapping of field: value, got {type(loaded).__name__}"
            )
        data.update(loaded)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        where = f"{path}: " if path is not None else ""
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ValueError(
            f"{where}invalid training config: {problems} (fields: {', '.join(TrainConfig.model_fields)})"
        ) from None
