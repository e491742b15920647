"""The pipeline's YAML configuration: one section per stage, validated by pydantic.

Unknown keys are errors (a typo must not silently fall back to a default); a bad file is one
:class:`ConfigError` line naming the file, the field and the fix.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from trace_envs.llm.gguf_model import MADE_MODELS
from trace_envs.problems import renamed_keys, validation_problems
from trace_envs.training.config import TrainConfig


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EpisodeSection(_Section):
    """What the rollout and evaluate sections share: which split of its tasks every target plays, and how long
    an episode may run."""

    split: str | None = Field(
        default=None,
        description="The split of its tasks every target plays (one of each target's splits); null: each target's own.",
    )
    max_steps: int | None = Field(default=None, ge=1, description="Agent turns per episode at most (null: the env's).")
    max_tokens: int | None = Field(default=None, ge=1, description="Tokens per model answer at most (a model policy).")

    def sampling(self) -> dict[str, Any] | None:
        """The sampling options a model policy gets (None: its defaults)."""
        return {"max_tokens": self.max_tokens} if self.max_tokens else None


class RolloutSection(EpisodeSection):
    """Roll the base agent out on every target task."""

    policy: str = Field(description="Policy spec of the base agent (oracle, flawed:<cap>,…, anthropic:<model> …).")
    samples: int = Field(default=1, ge=1, description="Episodes per task.")
    concurrency: int = Field(default=8, ge=1, description="Episodes in flight at once.")
    user_model: str | None = Field(
        default=None, description="Model spec of the tau2 customer; null: the scripted customer (generated tasks)."
    )
    max_tasks: int | None = Field(default=None, ge=1, description="At most this many tasks per target (null: all).")


class AnalyzeSection(_Section):
    """Contrastive capability analysis of each target's store."""

    analyst: str = Field(default="probes", description="'probes' (offline) or a model spec.")
    runs: int = Field(default=2, ge=1, description="Labelling runs R.")


class SynthesizeSection(_Section):
    """One capability env per kept capability, through every gate."""

    generator: str = Field(default="catalogue", description="'catalogue' (offline) or a model spec.")
    rounds: int = Field(default=3, ge=1, le=20, description="Attempts per capability.")
    seeds: int = Field(default=50, ge=1, description="Seeds of the property suite.")
    fuzz_examples: int = Field(default=50, ge=1, description="Hypothesis examples of the any-action check.")
    jobs: int = Field(default=2, ge=1, description="Capabilities synthesised in parallel.")
    folders: dict[str, Path] = Field(
        default_factory=dict,
        description="Synthesis output folders you already have, by target (e.g. retail: envs/, relative to the "
        "config file): that target is not synthesised; every module its manifest vouches for is trained on (boxed).",
    )


class ConfigWarning(UserWarning):
    """A pipeline config that still loads but uses a deprecated key; the message names the key to use."""


class TrainSection(TrainConfig):
    """One GRPO LoRA adapter per synthesised env: every :class:`TrainConfig` field (its defaults, the paper's), plus
    the base model. The pipeline sets ``env_ids`` (one env per adapter), and ``seed`` is the run's unless given."""

    model: str = Field(
        description="Base model: a directory, a hub id, 'tiny' (a tiny random model built offline) or a packaged "
        "pretrained model make-model builds ('smollm2-135m-instruct')."
    )

    @model_validator(mode="before")
    @classmethod
    def _grpo_fields_at_the_top(cls, data: Any) -> Any:
        """The deprecated ``grpo:`` mapping's TrainConfig fields, moved into the section (a key the section also
        gives keeps the section's value, as before); a warning names the keys to write instead."""
        if not isinstance(data, dict) or "grpo" not in data:
            return data
        data = dict(data)
        grpo = data.pop("grpo") or {}
        if not isinstance(grpo, dict):
            raise ValueError("grpo: a mapping of TrainConfig fields; better, write them in the train section itself")
        unknown = [key for key in grpo if key not in TrainConfig.model_fields]
        if unknown:
            raise ValueError(
                f"grpo: unknown key(s) {', '.join(map(repr, unknown))}: not TrainConfig fields (remove or fix the "
                "spelling; the fields are in docs/training-and-routing.md)"
            )
        moved = ", ".join(f"train.{key}" for key in grpo) or "nothing"
        warnings.warn(
            f"train.grpo is deprecated: write its keys in the train section itself ({moved})", ConfigWarning, 2
        )
        return {**grpo, **data}

    @field_validator("env_ids")
    @classmethod
    def _no_env_ids(cls, env_ids: list[str]) -> list[str]:
        if env_ids:
            raise ValueError("the pipeline trains one adapter per synthesised env: remove env_ids")
        return env_ids


class RouteSection(_Section):
    """Route every target task to an adapter with the frozen base model's label logits."""

    enabled: bool = Field(default=True, description="false: skip routing (evaluate the base model only).")


class EvaluateSection(EpisodeSection):
    """Evaluate policies on the targets."""

    policies: list[str] = Field(
        default_factory=lambda: ["base", "model", "routed"],
        description="Policies: 'base' (the rollout policy), 'model' (the trained base model alone), 'routed' (it "
        "with the routed adapters), or any [NAME=]SPEC of trace-envs evaluate (e.g. oracle).",
    )
    trials: int = Field(default=1, ge=1, description="Trials per task (pass^k).")
    max_tasks: int | None = Field(default=None, ge=1, description="At most this many tasks per domain (null: all).")
    concurrency: int = Field(default=8, ge=1, description="Episodes in flight at once.")


class PipelineConfig(_Section):
    """A whole TRACE run: targets, then one section per stage."""

    targets: list[str] = Field(
        min_length=1, description="Registered target names (trace_envs.targets: airline, retail, device, a plugin's)."
    )
    data: Path | None = Field(
        default=None,
        description="Data folder of the targets that need one (e.g. a tau2 data folder holding retail/ and "
        "airline/); null: generated stand-in data.",
    )
    seed: int = Field(default=0, description="Seed of the generated databases and of every seeded choice.")
    rollout: RolloutSection
    analyze: AnalyzeSection = Field(default_factory=AnalyzeSection)
    synthesize: SynthesizeSection = Field(default_factory=SynthesizeSection)
    train: TrainSection
    route: RouteSection = Field(default_factory=RouteSection)
    evaluate: EvaluateSection = Field(default_factory=EvaluateSection)
    simulated: list[str] = Field(
        default_factory=list, description="What this run simulates (the demo lists its stand-ins; reports say so)."
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, values: Any) -> Any:
        moved = renamed_keys(values, {"tau2_data": "data"})
        for section in ("rollout", "evaluate") if isinstance(moved, dict) else ():
            if section in moved:
                moved = {**moved, section: renamed_keys(moved[section], {"device_split": "split"}, f"{section}.")}
        return moved

    @field_validator("targets")
    @classmethod
    def _distinct(cls, targets: list[str]) -> list[str]:
        from trace_envs.registry.targets import targets as registered

        known = registered()
        unknown = [name for name in targets if name not in known]
        if unknown:
            raise ValueError(f"unknown target {unknown[0]!r}; use one of {', '.join(known)}")
        if len(set(targets)) != len(targets):
            raise ValueError("each target once")
        return targets

    @model_validator(mode="after")
    def _folders_of_targets(self) -> PipelineConfig:
        stray = [name for name in self.synthesize.folders if name not in self.targets]
        if stray:
            raise ValueError(f"synthesize.folders: {stray[0]!r} is not one of targets; use {', '.join(self.targets)}")
        return self

    @model_validator(mode="after")
    def _splits_of_targets(self) -> PipelineConfig:
        from trace_envs.registry.targets import target

        for section, split in (("rollout", self.rollout.split), ("evaluate", self.evaluate.split)):
            for name in self.targets if split is not None else []:
                splits = target(name).splits
                if split not in splits:
                    raise ValueError(
                        f"{section}.split: {split!r} is not a split of the target {name}; use one of "
                        f"{', '.join(splits)}, or null for each target's own"
                    )
        return self


class ConfigError(ValueError):
    """A pipeline config that cannot be used; the message names the file, the field and the fix."""


def parse_config(data: Any, source: str = "config") -> PipelineConfig:
    """A :class:`PipelineConfig` from parsed YAML; ``source`` names the file in errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a pipeline config is a YAML mapping (targets:, rollout:, train: …)")
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        count = len(exc.errors())
        problems = f"{count} problems: " if count > 1 else ""
        raise ConfigError(f"{source}: {problems}{validation_problems(exc, PipelineConfig)}") from None


def load_config(path: str | Path) -> PipelineConfig:
    """Read and validate a pipeline YAML file; relative ``data``, ``synthesize.folders`` and ``train.model``
    paths are taken relative to the file's folder."""
    import yaml

    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{file}: no such config file; pass the path of a pipeline YAML (see docs/tutorial.md)")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{file}: not valid YAML{where}; fix the syntax ({getattr(exc, 'problem', exc)})") from None
    config = parse_config(data, str(file))
    if config.data is not None and not config.data.is_absolute():
        config = config.model_copy(update={"data": file.parent / config.data})
    folders = {name: file.parent / folder for name, folder in config.synthesize.folders.items()}
    config = config.model_copy(update={"synthesize": config.synthesize.model_copy(update={"folders": folders})})
    model = Path(config.train.model)
    if config.train.model not in MADE_MODELS and not model.is_absolute() and (file.parent / model).exists():
        config = config.model_copy(
            update={"train": config.train.model_copy(update={"model": str(file.parent / model)})}
        )
    return config
