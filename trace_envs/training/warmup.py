"""Supervised warm-up on oracle episodes (TRL ``SFTTrainer``), so that a tiny model emits tool calls.

A randomly initialised model never calls a tool, so every GRPO group gets equal rewards and a zero
gradient. A short full fine-tune on the envs' reference solutions, rendered exactly as the GRPO
rollouts will look (same bridge tools, same chat template), fixes that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.llm.tool_template import adapt_tool_template, training_template

from .bridge import trl_environment
from .episodes import oracle_conversation
from .library_warnings import known_library_warnings
from .sft_rows import tokenized_rows

WarmupProgress = Callable[[str, int, int, dict[str, float]], None]
"""Called as ``progress(phase, done, total, info)``: phase ``episodes`` while the oracle episodes are
rendered, then ``steps`` after every optimiser step, with the last logged ``loss`` in ``info``."""


class WarmupConfig(BaseModel):
    """Settings of the supervised warm-up."""

    model_config = ConfigDict(extra="forbid")

    episodes_per_env: int = Field(default=64, ge=1, description="Oracle episodes (seeds 0..N-1) per env.")
    max_steps: int = Field(default=200, ge=1, description="Optimiser steps.")
    learning_rate: float = Field(default=3e-3, gt=0)
    batch_size: int = Field(default=8, ge=1)
    max_length: int | None = Field(
        default=None, ge=64, description="Token cap per episode (None: no cap; tau2 prompts are long)."
    )
    seed: int = 0


def oracle_dataset(
    env_ids: Sequence[str],
    episodes_per_env: int,
    first_seed: int = 0,
    on_episode: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """``{"messages", "tools"}`` rows of successful reference episodes of each env (seeds from ``first_seed``);
    ``on_episode(done, total)`` after each."""
    rows: list[dict[str, Any]] = []
    total = len(env_ids) * episodes_per_env
    for env_id in env_ids:
        cls = trl_environment(env_id)
        for seed in range(first_seed, first_seed + episodes_per_env):
            episode = oracle_conversation(cls, seed)
            if episode["reward"] < 1.0:
                raise RuntimeError(
                    f"{env_id} seed {seed}: the oracle episode scored {episode['reward']} through the bridge"
                )
            rows.append({"messages": episode["messages"], "tools": episode["tools"]})
            if on_episode is not None:
                on_episode(len(rows), total)
    return rows


def _progress_callback(progress: WarmupProgress) -> Any:
    from transformers import TrainerCallback

    class WarmupCallback(TrainerCallback):
        """Reports every optimiser step and the last logged loss."""

        def __init__(self) -> None:
            self.info: dict[str, float] = {}

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if logs and isinstance(logs.get("loss"), int | float):
                self.info = {"loss": float(logs["loss"])}
                progress("steps", int(state.global_step), int(state.max_steps), self.info)

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            progress("steps", int(state.global_step), int(state.max_steps), self.info)

    return WarmupCallback()


def warmup_model(
    model_dir: str | Path,
    env_ids: Sequence[str],
    out_dir: str | Path | None = None,
    config: WarmupConfig | None = None,
    progress: WarmupProgress | None = None,
) -> Path:
    """Fine-tune the model in ``model_dir`` on oracle episodes of ``env_ids``; save to ``out_dir`` (default:
    in place). ``progress`` hears about each rendered episode and each optimiser step."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.trainer.sft_config import SFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

    config = config or WarmupConfig()
    out = Path(out_dir or model_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    adapt_tool_template(tokenizer)  # a template without tools renders them as rollouts do
    original_template = tokenizer.chat_template
    # TRL's training variant of the template (what GRPO renders rollouts with) marks the assistant's
    # tokens, so the loss covers only the model's own turns: not the prompt, tool results or user replies.
    tokenizer.chat_template = training_template(tokenizer)
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    on_episode = None if progress is None else (lambda done, total: progress("episodes", done, total, {}))
    rows = oracle_dataset(env_ids, config.episodes_per_env, on_episode=on_episode)
    with known_library_warnings():  # transformers' gradient_checkpointing rename
        args = SFTConfig(
            output_dir=str(out / ".warmup"),
            max_steps=config.max_steps,
            learning_rate=config.learning_rate,
            per_device_train_batch_size=config.batch_size,
            max_length=config.max_length,
            assistant_only_loss=False,  # the rows come tokenized with their assistant masks (tokenized_rows)
            lr_scheduler_type="constant",
            logging_steps=max(1, config.max_steps // 10),
            save_strategy="no",
            report_to=[],
            use_cpu=not torch.cuda.is_available(),
            bf16=False,
            seed=config.seed,
            disable_tqdm=True,
        )
    callbacks = [] if progress is None else [_progress_callback(progress)]
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=tokenized_rows(rows, tokenizer),
        processing_class=tokenizer,
        callbacks=callbacks,
    )
    if progress is not None:
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)  # the progress callback reports the loss instead
    trainer.train()
    model.save_pretrained(out)
    tokenizer.chat_template = original_template  # TRL recognises the (tool-rendering) template byte for byte
    tokenizer.save_pretrained(out)
    return out
