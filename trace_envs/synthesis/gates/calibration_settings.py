"""What calibration (gate 7) is asked to do: the policy that plays, how much, and the bounds to meet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class CalibrationSettings(BaseModel):
    """Who plays, how much, and the bounds the outcome must meet."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(min_length=1, description="Policy spec, normally the base model (hf:…, openai:…#…, …).")
    seeds: int = Field(default=16, ge=1, description="N: seeds (groups) played.")
    samples: int = Field(default=8, ge=1, description="K: samples per seed (a GRPO group).")
    success_band: tuple[float, float] = Field(default=(0.2, 0.6), description="Mean success must lie in [low, high].")
    min_reward_std: float = Field(default=0.05, ge=0.0, description="Reward standard deviation must reach this.")
    min_informative: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Share of groups whose rewards are not all equal."
    )
    concurrency: int = Field(default=16, ge=1, description="Episodes in flight at once.")
    max_steps: int | None = Field(default=None, ge=1, description="Agent steps per episode (default: the env's).")
    model_options: dict[str, Any] = Field(default_factory=dict, description="ModelConfig fields (base_url, …).")
    sampling: dict[str, Any] = Field(default_factory=dict, description="Sampling params (e.g. temperature 1.0).")
    store: Path | None = Field(default=None, description="Trajectory store the episodes are appended to.")

    @model_validator(mode="after")
    def _band(self) -> CalibrationSettings:
        low, high = self.success_band
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"success_band: need 0 <= low <= high <= 1, got {self.success_band}")
        return self
