"""Training configuration: a pydantic model (loadable from YAML) with the paper's defaults.

Paper (TRACE §4.1, App. A): LoRA r 16 / alpha 16 on the 7 projections, GRPO with group-std advantages,
a per-token clipped ratio and constant-reward groups discarded, AdamW with lr 1e-5, up to 40
iterations of G groups x K = 16 rollouts (one seed per group), sampling temperature 1.0. Each place
where the authors' code differs is a switch (docs/training-and-routing.md has the table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from trace_envs.core.spot_checks import DEFAULT_SPOT_CHECK_SHARE, SPOT_CHECK_SHARE_HELP

Generation = Literal["transformers", "vllm-server", "vllm-colocate"]
ConstantGroups = Literal["count", "drop", "resample"]

LORA_TARGET_PRESETS: dict[str, list[str]] = {
    "paper": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "qkvo": ["q_proj", "k_proj", "v_proj", "o_proj"],
}
"""Named LoRA target sets: the paper's 7 projections, and the authors' newest trainer's q/k/v/o."""

DEFAULT_GROUPS_PER_STEP = 8
"""G when neither it nor the micro-batch is given: 40 x 8 x 16 = the paper's 5,120-rollout budget."""


class LoraSettings(BaseModel):
    """The LoRA adapter (PEFT ``LoraConfig``)."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=16, ge=1, description="LoRA rank (paper: 16).")
    alpha: int = Field(default=16, ge=1, description="LoRA alpha, scaling = alpha / r (paper: 16).")
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0, description="LoRA dropout probability (paper: none).")
    target_modules: str | list[str] = Field(
        default="paper",
        description="'paper' (q,k,v,o,gate,up,down), 'qkvo', 'all-linear' (PEFT's), or a list of module names.",
    )

    @field_validator("target_modules")
    @classmethod
    def _known_preset(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, str) and value not in (*LORA_TARGET_PRESETS, "all-linear"):
            raise ValueError(
                f"unknown preset {value!r}: use one of {', '.join([*LORA_TARGET_PRESETS, 'all-linear'])} "
                "or a list of module names"
            )
        if isinstance(value, list) and not value:
            raise ValueError("an empty list targets nothing: name at least one module, or use a preset")
        return value

    def peft_target_modules(self) -> str | list[str]:
        """``LoraConfig.target_modules``: a preset expanded to module names (``all-linear`` passed through)."""
        if isinstance(self.target_modules, str):
            return list(LORA_TARGET_PRESETS.get(self.target_modules, [])) or self.target_modules
        return list(self.target_modules)

    def peft_config(self) -> Any:
        """PEFT's ``LoraConfig`` for a causal LM with these settings (every trainer of ours builds it here)."""
        from peft import LoraConfig

        return LoraConfig(
            r=self.r,
            lora_alpha=self.alpha,
            lora_dropout=self.dropout,
            target_modules=self.peft_target_modules(),
            task_type="CAUSAL_LM",
        )


class VLLMSettings(BaseModel):
    """vLLM generation on GPUs (TRL's ``use_vllm``); ignored with ``generation: transformers``."""

    model_config = ConfigDict(extra="forbid")

    server_base_url: str | None = Field(default=None, description="e.g. http://10.0.0.5:8000 (server mode).")
    server_host: str = Field(default="0.0.0.0", description="vLLM server host, without server_base_url.")
    server_port: int = Field(default=8000, description="vLLM server port, without server_base_url.")
    server_timeout: float = Field(default=240.0, description="Seconds to wait for the vLLM server to answer.")
    gpu_memory_utilization: float = Field(default=0.3, gt=0.0, le=1.0, description="Colocate mode only.")
    tensor_parallel_size: int = Field(default=1, ge=1, description="Colocate mode only.")
    enable_sleep_mode: bool = Field(
        default=False, description="Colocate mode only: vLLM frees its GPU memory while the trainer steps."
    )


class TrainConfig(BaseModel):
    """Everything one GRPO run needs besides the model and the output directory."""

    model_config = ConfigDict(extra="forbid")

    env_ids: list[str] = Field(default_factory=list, description="One env, or several for a uniform mixture.")
    env_knobs: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Knobs per env id.")
    lora: LoraSettings = Field(default_factory=LoraSettings)
    learning_rate: float = Field(default=1e-5, gt=0.0, description="AdamW learning rate (paper: 1e-5).")
    weight_decay: float = Field(default=0.0, ge=0.0, description="AdamW weight decay (paper: none).")
    max_steps: int = Field(
        default=40,
        ge=1,
        description="GRPO iterations in all, counting those a resumed run already did (paper: up to 40 per "
        "capability).",
    )
    num_generations: int = Field(default=16, ge=2, description="K: rollouts per group, all from one seed (paper: 16).")
    groups_per_step: int = Field(
        default=DEFAULT_GROUPS_PER_STEP,
        ge=1,
        description="G: groups of K rollouts per optimiser step, all processes together (paper's 5,120 budget: 8; "
        "scripts: 4-8); each of W processes collects G / W of them.",
    )
    per_device_train_batch_size: int = Field(
        default=16, ge=1, description="Rollouts per micro-batch (memory); default K. G x K must be a multiple."
    )
    gradient_accumulation_steps: int = Field(
        default=8,
        ge=1,
        description="Micro-batches per step, all processes together (each runs 1/W of them); default G x K / "
        "micro-batch (derived, may be omitted).",
    )
    scale_rewards: Literal["group", "batch", "none"] = Field(
        default="group",
        description="Advantage scaling (TRL scale_rewards): 'group' divides by the group's reward std (paper), "
        "'none' only centres on the group mean (the authors' trainers), 'batch' uses the batch std.",
    )
    importance_sampling_level: Literal["token", "sequence"] = Field(
        default="token",
        description="Clipped ratio per token (paper) or one per sequence (authors' code; TRL's GSPO ratio).",
    )
    loss_type: Literal["grpo", "bnpo", "dr_grpo", "dapo"] = Field(
        default="grpo",
        description="TRL loss_type; 'grpo' is the paper's eq. 2 (per-rollout token mean, then mean over rollouts).",
    )
    constant_groups: ConstantGroups = Field(
        default="drop",
        description="Groups whose K rewards are equal: 'count' (kept, zero advantage), 'drop' (out of the loss "
        "and its normaliser: paper), 'resample' (drop, and re-collect with new seeds: authors' code).",
    )
    resample_rounds: int = Field(default=3, ge=1, description="'resample': re-collections per step at most.")
    min_informative_groups: float = Field(
        default=0.5, gt=0.0, le=1.0, description="'resample': stop once this share of G groups has a reward spread."
    )
    hint_share: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="Share of each group's K rollouts whose system prompt carries the capability's hint "
        "(paper: 0; the authors' envs: 0.25-0.5). The loss always sees the base prompt.",
    )
    temperature: float = Field(default=1.0, gt=0.0, description="Rollout sampling temperature (paper: 1.0).")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Rollout nucleus sampling (1: off).")
    max_completion_length: int = Field(default=2048, ge=8, description="Token cap of a whole multi-turn rollout.")
    max_tool_calling_iterations: int | None = Field(
        default=None, ge=1, description="Tool rounds per rollout (default: the env's max_turns)."
    )
    beta: float = Field(default=0.0, ge=0.0, description="KL coefficient (0: no reference model).")
    epsilon: float = Field(default=0.2, gt=0.0, description="PPO clipping threshold.")
    num_seeds: int = Field(default=1000, ge=1, description="Dataset rows (one seed each).")
    spot_check_share: float = Field(
        default=DEFAULT_SPOT_CHECK_SHARE,
        ge=0.0,
        le=1.0,
        description=f"{SPOT_CHECK_SHARE_HELP} Training checks its row seeds before any step, and drops a stopped "
        "env's rows from the dataset.",
    )
    spot_check_seed: int | None = Field(
        default=None, description="Seed of the spot-checked seeds' draw (None: a fresh one each run)."
    )
    first_seed: int = Field(default=0, ge=0, description="Seed of the first dataset row; the rows count up.")
    generation: Generation = Field(default="transformers", description="Rollout backend.")
    vllm: VLLMSettings = Field(default_factory=VLLMSettings)
    gradient_checkpointing: bool = Field(
        default=False, description="Recompute activations in the backward pass: less memory, slower steps."
    )
    bf16: bool | None = Field(default=None, description="None: bf16 when a CUDA GPU is present.")
    logging_steps: int = Field(default=1, ge=1, description="Log the training curve every N steps.")
    save_steps: int = Field(default=10, ge=1, description="Checkpoint every N steps (resume after a kill).")
    seed: int = Field(default=0, description="Seed of the trainer (weight init of the adapter, sampling).")
    router_example: Literal["oracle", "policy"] = Field(
        default="oracle",
        description="Episode saved for the router: the env's reference solution, or the first successful "
        "training rollout (falls back to the oracle). Early rollouts can succeed with junk text.",
    )
    report_to: list[str] = Field(
        default_factory=list, description="Where TRL reports metrics, e.g. wandb (repeat the option for several)."
    )

    @model_validator(mode="before")
    @classmethod
    def _derive_batch(cls, data: Any) -> Any:
        """Fill the batch fields a config leaves out from the ones it gives.

        G x K rollouts per step = micro-batch x accumulation steps. Given G (or nothing: G = 8), the micro-batch
        defaults to K and the accumulation to the rest; given only the micro-batch (and accumulation, default 1),
        as configs written before G existed do, G is what they hold.
        """
        if not isinstance(data, dict):
            return data
        data = dict(data)
        k = data.get("num_generations", cls.model_fields["num_generations"].default)
        g, b, a = (
            data.get(n) for n in ("groups_per_step", "per_device_train_batch_size", "gradient_accumulation_steps")
        )
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (k, g, b, a) if v is not None):
            return data  # field validation names the bad value
        if g is None:
            g = max(1, ((b or k) * (a or 1)) // k) if (b or a) else DEFAULT_GROUPS_PER_STEP
            data["groups_per_step"] = g
        if b is None:
            b = g * k // a if a and (g * k) % a == 0 else k
            data["per_device_train_batch_size"] = b
        if a is None:
            data["gradient_accumulation_steps"] = max(1, g * k // b)
        return data

    @model_validator(mode="after")
    def _check_batch(self) -> TrainConfig:
        if (self.per_device_train_batch_size * self.gradient_accumulation_steps) % self.num_generations:
            raise ValueError(
                f"per_device_train_batch_size * gradient_accumulation_steps "
                f"({self.per_device_train_batch_size} * {self.gradient_accumulation_steps}) must be a multiple of "
                f"num_generations ({self.num_generations}) so that every group of K rollouts is complete"
            )
        rollouts = self.per_device_train_batch_size * self.gradient_accumulation_steps
        if rollouts != self.groups_per_step * self.num_generations:
            raise ValueError(
                f"groups_per_step * num_generations ({self.groups_per_step} * {self.num_generations}) must equal "
                f"per_device_train_batch_size * gradient_accumulation_steps ({self.per_device_train_batch_size} * "
                f"{self.gradient_accumulation_steps}): give G and K and leave the micro-batch fields out, or make them agree"
            )
        if self.generation == "vllm-server" and not self.vllm.server_base_url and not self.vllm.server_host:
            raise ValueError("generation 'vllm-server' needs vllm.server_base_url (or vllm.server_host/port)")
        return self

    @property
    def rollouts_per_step(self) -> int:
        """Rollouts one optimiser step generates in all processes together: G groups of K."""
        return self.per_device_train_batch_size * self.gradient_accumulation_steps

    def accumulation_per_process(self, world_size: int) -> int:
        """Micro-batches each of ``world_size`` processes runs per step, so that the world's step is still G x K
        rollouts (TRL's generation batch is micro-batch x processes x this); every process holds whole groups."""
        if self.groups_per_step % world_size or self.gradient_accumulation_steps % world_size:
            raise ValueError(
                f"{world_size} processes cannot share a step of groups_per_step {self.groups_per_step} in "
                f"{self.gradient_accumulation_steps} micro-batches of {self.per_device_train_batch_size} "
                f"(each process must hold whole groups and whole micro-batches): make groups_per_step (--groups-per-step) "
                f"a multiple of {world_size} and per_device_train_batch_size (--per-device-train-batch-size) a divisor of "
                f"{self.groups_per_step * self.num_generations // max(1, world_size)}, or launch fewer processes"
            )
        return self.gradient_accumulation_steps // world_size

    @property
    def hinted_per_group(self) -> int:
        """Rollouts of each group that see the hint prompt: ``round(hint_share * K)``, at most K - 1."""
        return min(self.num_generations - 1, round(self.hint_share * self.num_generations))

    @property
    def rollout_budget(self) -> int:
        """Rollouts the whole run spends: iterations x G x K (the budget every baseline is matched on)."""
        return self.max_steps * self.rollouts_per_step

    def grpo_kwargs(
        self, output_dir: str | Path, max_tool_calling_iterations: int, use_cpu: bool, world_size: int = 1
    ) -> dict[str, Any]:
        """Keyword arguments for ``trl.GRPOConfig`` on ``world_size`` processes (kept as a dict so it is testable
        without building one); the step's G x K rollouts are shared out, so the budget does not grow with W."""
        bf16 = (not use_cpu) if self.bf16 is None else self.bf16
        accumulation = self.accumulation_per_process(world_size)
        kwargs: dict[str, Any] = {
            "output_dir": str(output_dir),
            "learning_rate": self.learning_rate,
            "optim": "adamw_torch",
            "weight_decay": self.weight_decay,
            "lr_scheduler_type": "constant",
            "max_steps": self.max_steps,
            "num_generations": self.num_generations,
            "per_device_train_batch_size": self.per_device_train_batch_size,
            "gradient_accumulation_steps": accumulation,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_completion_length": self.max_completion_length,
            "max_tool_calling_iterations": self.max_tool_calling_iterations or max_tool_calling_iterations,
            "steps_per_generation": accumulation,  # one generation batch (G x K in the world) per step
            "beta": self.beta,
            "epsilon": self.epsilon,
            "scale_rewards": self.scale_rewards,
            "importance_sampling_level": self.importance_sampling_level,
            "loss_type": self.loss_type,
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
        from trace_envs.problems import validation_problems

        where = f"{path}: " if path is not None else ""
        raise ValueError(f"{where}invalid training config: {validation_problems(exc, TrainConfig)}") from None
