"""Pydantic models of the analysis stage: the capability dictionary, per-trajectory labels, the
statistics per capability and run, and the whole ``analysis.json`` result."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trace_envs.llm.base import Usage

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
ANALYSIS_FORMAT = "trace-envs/analysis@1"


def to_snake_case(name: str) -> str:
    """``"Tool-calling Precision"`` -> ``"tool_calling_precision"`` (used to merge duplicate names)."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.strip()).lower())
    return "_".join(words)


class Label(StrEnum):
    """NA: the task does not need the capability; PRESENT: needed and exercised; LACKING: needed, not exercised."""

    NA = "NA"
    PRESENT = "PRESENT"
    LACKING = "LACKING"


class CapabilityDef(BaseModel):
    """One entry of the capability dictionary: a fixed snake_case name and a one-paragraph description."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(description="snake_case, e.g. unit_conversion")
    description: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _snake(cls, value: str) -> str:
        if not SNAKE_CASE.match(value):
            raise ValueError(f"capability name {value!r} is not snake_case (e.g. {to_snake_case(value)!r})")
        return value


class CapabilityDictionary(BaseModel):
    """The canonical dictionary found by discovery (fixed for every labelling run)."""

    capabilities: list[CapabilityDef]

    @field_validator("capabilities")
    @classmethod
    def _unique(cls, value: list[CapabilityDef]) -> list[CapabilityDef]:
        names = [c.name for c in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate capability names {duplicates}; merge them into one entry each")
        return value

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.capabilities]

    def get(self, name: str) -> CapabilityDef | None:
        return next((c for c in self.capabilities if c.name == name), None)


class CapabilityLabel(BaseModel):
    """The label of one capability on one trajectory, with a one-line rationale."""

    capability: str
    label: Label
    rationale: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("rationale")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return " ".join(value.split())


class TrajectoryLabels(BaseModel):
    """Every capability's label on one trajectory in one labelling run."""

    run: int = Field(ge=0)
    episode: str = Field(description="The episode id (see trace_envs.analysis.trajectories.episode_id).")
    success: bool
    labels: dict[str, CapabilityLabel]
    usage: Usage = Field(default_factory=Usage)
    analyst: str = ""


class CapabilityStats(BaseModel):
    """Contrastive statistics of one capability in one run. Ratios with an empty denominator are
    ``None`` (undefined), never 0."""

    capability: str
    successes: int = 0
    failures: int = 0
    lacking_success: int = 0
    applicable_success: int = Field(default=0, description="Successes labelled PRESENT or LACKING.")
    lacking_failure: int = 0
    applicable_failure: int = Field(default=0, description="Failures labelled PRESENT or LACKING.")
    er_plus: float | None = Field(default=None, description="LACKING / not-NA among successes.")
    er_minus: float | None = Field(default=None, description="LACKING / not-NA among failures.")
    gap: float | None = Field(default=None, description="er_minus - er_plus; None when either is undefined.")
    coverage: float | None = Field(default=None, description="Failures labelled LACKING / all failures.")
    kept: bool = False
    reason: str = Field(default="", description="Why it was kept or not, in words.")


class RunStats(BaseModel):
    """The statistics of one labelling run."""

    run: int
    capabilities: dict[str, CapabilityStats]

    @property
    def kept(self) -> list[str]:
        return [name for name, stats in self.capabilities.items() if stats.kept]


class CapabilitySummary(BaseModel):
    """One capability across runs: how often it was selected, and its coverage distribution."""

    capability: str
    runs: int
    selected: int
    selection_frequency: float
    coverage_median: float | None
    coverage_q1: float | None
    coverage_q3: float | None
    gap_median: float | None
    kept: bool


class AnalysisConfig(BaseModel):
    """Settings of one analysis (recorded in ``analysis.json``)."""

    model_config = ConfigDict(extra="forbid")

    analyst: str = Field(description="A model spec (anthropic:…, openai:…#…, hf:…) or 'probes'.")
    runs: int = Field(default=10, ge=1, description="Labelling runs R (discovery runs once).")
    delta: float = Field(default=0.20, ge=-1.0, le=1.0, description="Minimum gap ER- - ER+.")
    rho: float = Field(default=0.10, ge=0.0, le=1.0, description="Minimum coverage of failures.")
    require_contrast: bool = Field(
        default=False,
        description="Never keep a capability no successful trajectory needed (ER+ undefined); by default its "
        "ER- is tested against delta instead of the undefined gap.",
    )
    min_selection: float = Field(
        default=0.5, gt=0.0, le=1.0, description="Keep a capability selected in at least this share of runs."
    )
    discovery_token_budget: int = Field(
        default=60_000, ge=1_000, description="Tokens of trajectories shown to discovery."
    )
    trajectory_token_budget: int = Field(default=6_000, ge=200, description="Token cap of one rendered trajectory.")
    seed: int = Field(default=0, description="Seed of the discovery sample.")
    batch: bool = Field(default=False, description="Label through the Anthropic Message Batches API.")
    concurrency: int = Field(default=8, ge=1, description="Labelling requests in flight at once.")
    max_repairs: int = Field(default=2, ge=0, le=10, description="Repair retries on an invalid analyst answer.")
    known_capabilities: bool = Field(
        default=True, description="Show the shipped capability names to discovery so that matches reuse them."
    )
    sampling: dict[str, Any] = Field(default_factory=dict, description="Sampling params of analyst requests.")


class Agreement(BaseModel):
    """How often the analyst's labels match the offline probes, per capability both know."""

    capability: str
    compared: int
    agree: int
    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]] = Field(description="analyst label -> probe label -> count")


class AnalysisResult(BaseModel):
    """``analysis.json``: the dictionary, every label, per-run statistics, the summary across runs,
    the kept capability names and the cost."""

    format: str = ANALYSIS_FORMAT
    config: AnalysisConfig
    store: str = ""
    episodes: int = 0
    successes: int = 0
    failures: int = 0
    dictionary: CapabilityDictionary
    labels: list[TrajectoryLabels] = Field(default_factory=list)
    runs: list[RunStats] = Field(default_factory=list)
    summary: list[CapabilitySummary] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list, description="Names of the kept capabilities.")
    agreement: list[Agreement] = Field(default_factory=list)
    discovery_usage: Usage = Field(default_factory=Usage)
    labelling_usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
