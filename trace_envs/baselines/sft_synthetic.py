"""``sft-synthetic``: one LoRA adapter trained with TRL's ``SFTTrainer`` on successful trajectories of the
capability envs (the paper's "SFT Synthetic" consolidation baseline).

Episodes are collected with a configurable policy (a model spec, or ``oracle`` offline) within the
rollout budget (:mod:`.sft_data`); the successes are rendered with TRL's training chat template, whose
generation marks let ``assistant_only_loss`` put the loss on the assistant's turns only (not the system
prompt, the user's turns or the tool results). The adapter gets ``trace_adapter.json`` like ``train``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import Message, render_transcript
from trace_envs.llm.tool_template import adapt_tool_template, training_template
from trace_envs.training import AdapterMetadata, EpisodeExample, LoraSettings, save_metadata
from trace_envs.training.library_warnings import known_library_warnings
from trace_envs.training.sft_rows import tokenized_rows
from trace_envs.training.trainer import _versions, add_to_curve

from .grpo import ADAPTER_DIR
from .record import BaselineRun, save_baseline_run
from .sft_data import Collection, collect, collection_jobs

METHOD = "sft-synthetic"


class SFTSettings(BaseModel):
    """How ``sft-synthetic`` collects and trains (defaults: SkillRL's cold-start SFT in the authors' repo,
    lr 1e-4 for 3 epochs, on the paper's LoRA)."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(
        default="oracle", description="Policy spec that collects the episodes (a model spec, or oracle)."
    )
    first_seed: int = Field(default=0, ge=0, description="First seed of every env.")
    concurrency: int = Field(default=16, ge=1, description="Episodes in flight while collecting.")
    lora: LoraSettings = Field(default_factory=LoraSettings)
    learning_rate: float = Field(default=1e-4, gt=0.0)
    epochs: float = Field(default=3.0, gt=0.0, description="Passes over the successful trajectories.")
    max_steps: int | None = Field(default=None, ge=1, description="Optimiser steps (overrides epochs).")
    batch_size: int = Field(default=4, ge=1)
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    max_length: int | None = Field(default=None, ge=64, description="Token cap per trajectory (None: no cap).")
    bf16: bool | None = Field(default=None, description="None: bf16 when a CUDA GPU is present.")
    seed: int = 0


def sft_args(settings: SFTSettings, output_dir: Path) -> dict[str, Any]:
    """Keyword arguments for ``trl.SFTConfig`` (a dict, testable without building one)."""
    import torch

    use_cpu = not torch.cuda.is_available()
    return {
        "output_dir": str(output_dir),
        "learning_rate": settings.learning_rate,
        "num_train_epochs": settings.epochs,
        "max_steps": settings.max_steps or -1,
        "per_device_train_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation_steps,
        "max_length": settings.max_length,
        # the rows come tokenized with their assistant masks (tokenized_rows), from which TRL builds the labels
        "assistant_only_loss": False,
        "lr_scheduler_type": "constant",
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "use_cpu": use_cpu,
        "bf16": (not use_cpu) if settings.bf16 is None else settings.bf16,
        "seed": settings.seed,
        "disable_tqdm": True,
    }


def build_sft_trainer(rows: list[dict[str, Any]], model: str, out_dir: str | Path, settings: SFTSettings) -> Any:
    """TRL's ``SFTTrainer`` with a LoRA adapter on ``rows`` ({messages, tools}); the tokenizer carries TRL's
    training chat template (what GRPO renders rollouts with), which marks the assistant's tokens."""
    from transformers import AutoTokenizer
    from trl.trainer.sft_config import SFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

    if not rows:
        raise ValueError("no successful trajectory to train on: raise --budget, or collect with a stronger --policy")
    tokenizer = AutoTokenizer.from_pretrained(str(model))
    adapt_tool_template(tokenizer)  # a template without tools renders them as rollouts do
    tokenizer.chat_template = training_template(tokenizer)
    lora = settings.lora.peft_config()
    with known_library_warnings():  # transformers' gradient_checkpointing rename
        return SFTTrainer(
            model=str(model),
            args=SFTConfig(**sft_args(settings, Path(out_dir) / "checkpoints")),
            train_dataset=tokenized_rows(rows, tokenizer),
            processing_class=tokenizer,
            peft_config=lora,
        )


def sft_synthetic(
    env_ids: Sequence[str],
    model: str,
    out_dir: str | Path,
    budget: int,
    settings: SFTSettings | None = None,
    *,
    knobs: dict[str, dict[str, Any]] | None = None,
    model_options: dict[str, Any] | None = None,
) -> tuple[AdapterMetadata, BaselineRun]:
    """Collect ``budget`` episodes on ``env_ids``, train a LoRA adapter on the successes; the episodes in
    ``OUT/rollouts.jsonl`` (a rerun resumes them), the adapter in ``OUT/adapter``, the record in
    ``OUT/baseline.json``."""
    from transformers import AutoTokenizer

    settings = settings or SFTSettings()
    out = Path(out_dir)
    jobs = collection_jobs(env_ids, budget, settings.first_seed, knobs)
    data: Collection = collect(
        jobs, settings.policy, out, concurrency=settings.concurrency, model_options=model_options
    )
    trainer = build_sft_trainer(data.rows, model, out / ADAPTER_DIR, settings)
    trainer.train()
    adapter = out / ADAPTER_DIR
    trainer.model.save_pretrained(str(adapter))
    AutoTokenizer.from_pretrained(str(model)).save_pretrained(str(adapter))  # the model's own chat template
    curve: list[dict[str, Any]] = []
    for entry in trainer.state.log_history:
        add_to_curve(
            curve, {"step": int(entry.get("step", 0)), **{k: v for k, v in entry.items() if isinstance(v, int | float)}}
        )
    first = data.examples[0]
    metadata = AdapterMetadata(
        capability="sft_synthetic",
        description="One adapter fine-tuned (SFT) on successful trajectories of: " + ", ".join(env_ids) + ".",
        env_ids=list(env_ids),
        base_model=str(model),
        config=settings.model_dump(mode="json"),
        status="complete",
        steps_done=int(trainer.state.global_step),
        curve=curve,
        example=EpisodeExample(
            env_id=first.env_id,
            seed=first.seed,
            reward=first.reward,
            source="oracle" if settings.policy == "oracle" else "policy",
            transcript=render_transcript(cast(list[Message], first.messages)),
        ),
        versions=_versions(),
    )
    save_metadata(adapter, metadata)
    record = BaselineRun(
        method=METHOD,
        env_ids=list(env_ids),
        base_model=str(model),
        budget=budget,
        rollouts_used=data.episodes,
        artifact=ADAPTER_DIR,
        config={
            **settings.model_dump(mode="json"),
            "successes": data.successes,
            "trained_on": len(data.rows),
            "dropped_on_replay": data.dropped,
        },
    )
    save_baseline_run(out, record)
    return metadata, record
