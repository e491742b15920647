"""Warm a base model up on a policy's episodes from the trajectory store: supervised fine-tuning that teaches
a pretrained model the tool format, and exactly the behaviour of the policy it imitates.

Fed the ``flawed:<capability>`` scripted policy's successful episodes, the result is a *deficient* base: it
calls the tools as the env expects but lacks the planted capability (on ``trace/order-cancel-v0`` it
cancels without looking the order up, and succeeds only where the order happened to be pending). The
episodes are collected by :mod:`.sft_data` and rendered as the rollout showed them to the agent (its
``inference`` rows: user turns as user messages, the tools the env offered), because the warmed-up model is the
agent that rollouts and evaluations play. They are trained by :func:`.sft_synthetic.build_sft_trainer` (TRL's
``SFTTrainer``, LoRA, loss on the assistant's turns), and the LoRA is merged into the weights, so the warmed-up
model is an ordinary model folder that ``hf:`` policies, ``train`` and the router load.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.rollout import EpisodeJob

from .sft_data import collect, collection_jobs
from .sft_synthetic import SFTSettings, build_sft_trainer

WARMUP_FILE = "trace_warmup.json"


class WarmupRecord(BaseModel):
    """What ``trace_warmup.json`` in a warmed-up folder records."""

    base_model: str
    policy: str
    env_ids: list[str]
    episodes: int = Field(description="Episodes rolled out (successful or not).")
    trained_on: int = Field(description="Successful episodes trained on.")
    reference_episodes: int = Field(
        default=0, description="Reference (``oracle``) episodes mixed in, on seeds after the policy's."
    )
    steps: int
    final_loss: float | None
    settings: dict[str, Any]


def warmup_on_episodes(
    model: str | Path,
    env_ids: Sequence[str],
    out_dir: str | Path,
    *,
    policy: str,
    episodes: int,
    settings: SFTSettings | None = None,
    reference_episodes: int = 0,
    reference_seeds: Sequence[int] | None = None,
) -> WarmupRecord:
    """Collect ``episodes`` episodes of ``policy`` on ``env_ids`` (stored in ``OUT/episodes``, resumable), fine-tune
    ``model`` on the successes with LoRA, merge it, and save the warmed-up model in ``out_dir``.

    ``reference_episodes`` mixes in that many ``oracle`` episodes on the seeds after the policy's: a base trained on
    the flawed policy alone never samples the planted capability, so GRPO groups on it are constant and nothing
    is learned; a small share of reference episodes leaves the capability rare instead of absent.
    ``reference_seeds``: play the reference episodes on these seeds instead (of each env), e.g. only the seeds whose
    reference solution shows the tools but not the capability's decision."""
    from transformers import AutoTokenizer

    settings = settings or SFTSettings(policy=policy)
    out = Path(out_dir)
    done = out / WARMUP_FILE
    if done.is_file():
        return WarmupRecord.model_validate_json(done.read_text(encoding="utf-8"))
    jobs = collection_jobs(env_ids, episodes, settings.first_seed)
    data = collect(jobs, policy, out / "episodes", concurrency=settings.concurrency, row_format="inference")
    rows = list(data.rows)
    reference_count = 0
    if reference_episodes or reference_seeds:
        reference_jobs = (
            [EpisodeJob(env_id=env_id, seed=seed) for env_id in env_ids for seed in reference_seeds]
            if reference_seeds is not None
            else collection_jobs(env_ids, reference_episodes, settings.first_seed + episodes)
        )
        reference = collect(
            reference_jobs, "oracle", out / "episodes-reference", concurrency=settings.concurrency,
            row_format="inference",
        )  # fmt: skip
        rows += reference.rows
        reference_count = len(reference_jobs)
        random.Random(settings.seed).shuffle(rows)
    trainer = build_sft_trainer(rows, str(model), out / "checkpoints", settings)
    trainer.train()
    merged = trainer.model.merge_and_unload()
    merged.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(model)).save_pretrained(str(out))
    losses = [float(e["loss"]) for e in trainer.state.log_history if isinstance(e.get("loss"), int | float)]
    record = WarmupRecord(
        base_model=str(model),
        policy=policy,
        env_ids=list(env_ids),
        episodes=data.episodes,
        trained_on=len(rows),
        reference_episodes=reference_count,
        steps=int(trainer.state.global_step),
        final_loss=losses[-1] if losses else None,
        settings=settings.model_dump(mode="json"),
    )
    done.write_text(json.dumps(record.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    return record
