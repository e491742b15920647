"""The metadata file saved beside every adapter (``trace_adapter.json``): what the router and people need."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

METADATA_FILE = "trace_adapter.json"


class EpisodeExample(BaseModel):
    """One successful episode of the adapter's env, shown to the router as the capability's example."""

    env_id: str
    seed: int
    reward: float
    source: Literal["policy", "oracle"] = Field(description="A training rollout, or the env's reference solution.")
    transcript: str


class StepGroups(BaseModel):
    """The groups one optimiser step collected in all processes: each one's start seed (rank order, re-collected
    groups after the first batch) and how many had K equal rewards."""

    step: int = Field(ge=1)
    seeds: list[int] = Field(default_factory=list)
    identical: int = Field(default=0, ge=0, description="Groups whose K rewards were all equal (no signal).")


class AdapterMetadata(BaseModel):
    """Capability, env, base model, config, training curve and one successful episode of an adapter."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = 1
    capability: str = Field(description="Capability name (or 'multi_capability' for a mixture).")
    description: str
    env_ids: list[str]
    base_model: str
    config: dict[str, Any]
    status: Literal["training", "complete", "merged"] = "training"
    steps_done: int = 0
    curve: list[dict[str, Any]] = Field(default_factory=list, description="One entry per logging step.")
    identical_reward_groups: int = Field(
        default=0, description="Groups whose K rewards were all equal (no signal), in all processes."
    )
    total_groups: int = Field(default=0, description="Groups collected, re-collected ones included, in all processes.")
    rollout_budget: int = Field(default=0, description="The config's iterations x G x K (all processes together).")
    rollouts_collected: int = Field(
        default=0, description="Rollouts generated so far, re-collected groups included, in all processes."
    )
    world_size: int = Field(default=1, ge=1, description="Processes of the run's last launch (torchrun/accelerate).")
    step_groups: list[StepGroups] = Field(
        default_factory=list, description="Per optimiser step, the groups all processes collected."
    )

    def count_groups(self, num_generations: int) -> None:
        """Set the group and rollout totals from :attr:`step_groups` (the world's, re-collected groups included)."""
        self.total_groups = sum(len(s.seeds) for s in self.step_groups)
        self.identical_reward_groups = sum(s.identical for s in self.step_groups)
        self.rollouts_collected = self.total_groups * num_generations

    @property
    def seeds_used(self) -> list[int]:
        """Every group's start seed in the order collected (a seed repeats only after a pass over the dataset)."""
        return [seed for step in self.step_groups for seed in step.seeds]

    example: EpisodeExample | None = None
    versions: dict[str, str] = Field(default_factory=dict)

    @property
    def env_id(self) -> str:
        return self.env_ids[0]


def save_metadata(directory: str | Path, metadata: AdapterMetadata) -> Path:
    """Write ``trace_adapter.json`` atomically (a kill never leaves half a file)."""
    path = Path(directory) / METADATA_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(metadata.model_dump(mode="json"), indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_metadata(directory: str | Path) -> AdapterMetadata:
    """Read an adapter's ``trace_adapter.json`` (clear error when it is missing)."""
    path = Path(directory) / METADATA_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{directory} has no {METADATA_FILE}: it is not an adapter written by `trace-envs train` "
            "(train one, or write the metadata with trace_envs.training.metadata.save_metadata)"
        )
    return AdapterMetadata.model_validate_json(path.read_text(encoding="utf-8"))
