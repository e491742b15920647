"""Run the stages in order, each cached under ``<out>/<stage>/`` (see :mod:`.cache`), or one stage alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import data_stages, final_stages, model_stages
from .cache import begin, finish, is_finished, stage_key
from .config import PipelineConfig
from .context import StageContext, StageError

StageFn = Callable[[StageContext], dict[str, Any]]


@dataclass(frozen=True)
class Stage:
    """A stage: its function, the stages whose outputs it reads, and the config it depends on."""

    name: str
    run: StageFn
    inputs: tuple[str, ...]
    section: Callable[[PipelineConfig], Any]


STAGES: tuple[Stage, ...] = (
    Stage("rollout", data_stages.rollout, (),
          lambda c: {"targets": c.targets, "data": c.data, "seed": c.seed, "rollout": c.rollout}),
    Stage("analyze", data_stages.analyze, ("rollout",), lambda c: c.analyze),
    Stage("synthesize", data_stages.synthesize, ("rollout", "analyze"),
          lambda c: {"synthesize": c.synthesize, "folders": data_stages.folder_manifests(c.synthesize.folders)}),
    Stage("train", model_stages.train, ("synthesize",), lambda c: {"train": c.train, "seed": c.seed}),
    Stage("route", model_stages.route, ("rollout", "train"), lambda c: c.route),
    Stage("evaluate", final_stages.evaluate, ("rollout", "train"), lambda c: c.evaluate),
    Stage("report", final_stages.report, ("analyze", "synthesize", "train", "route", "evaluate"),
          lambda c: {"simulated": c.simulated}),
)  # fmt: skip
STAGE_NAMES = tuple(s.name for s in STAGES)


@dataclass
class StageOutcome:
    """What happened to one stage in a run: ``ran``, ``resumed`` (a killed run continued) or ``cached``."""

    name: str
    action: str
    summary: dict[str, Any]


class PipelineEvents:
    """Callbacks of a run (the CLI's progress display implements them); the defaults do nothing."""

    def stage_started(self, name: str, action: str) -> None: ...
    def stage_status(self, name: str, text: str, done: int | None, total: int | None) -> None: ...
    def stage_finished(self, outcome: StageOutcome) -> None: ...


def _json(value: Any) -> Any:
    """A config section as plain JSON data (pydantic models dumped, paths as strings)."""
    import json

    from pydantic import BaseModel

    def default(item: Any) -> Any:
        return item.model_dump(mode="json") if isinstance(item, BaseModel) else str(item)

    return json.loads(json.dumps(value, default=default))


def _version() -> str:
    import trace_envs

    return trace_envs.__version__


def pending_stages(config: PipelineConfig, out: str | Path, only: str | None = None) -> tuple[str, ...]:
    """The stages a run would run (not cached): a stage whose input will run again runs too."""
    root = Path(out)
    digests: dict[str, str] = {}
    pending: list[str] = []
    for stage in STAGES:
        if any(name in pending for name in stage.inputs):
            pending.append(stage.name)
            continue
        key = stage_key(stage.name, _version(), _json(stage.section(config)), {i: digests[i] for i in stage.inputs})
        done = is_finished(root / stage.name, key)
        if done is None:
            pending.append(stage.name)
        else:
            digests[stage.name] = str(done.digest)
    return tuple(name for name in pending if only is None or name == only)


def preflight_pending(config: PipelineConfig, out: str | Path, only: str | None = None) -> None:
    """The preflight of the stages a run would run (cached ones need nothing); raises ``PreflightFailed``."""
    from .preflight import require_preflight

    pending = pending_stages(config, out, only)
    if pending:
        require_preflight(config, out, pending)


def run_pipeline(
    config: PipelineConfig,
    out: str | Path,
    *,
    only: str | None = None,
    events: PipelineEvents | None = None,
    check: bool = True,
) -> list[StageOutcome]:
    """Run (or resume) every stage into ``out``, or only the stage ``only``, whose inputs must be finished.

    First (``check``) the preflight of the stages that will run: a missing key, extra, endpoint, data folder
    or disk space raises :class:`~trace_envs.pipeline.preflight.PreflightFailed` before anything is spent.
    Raises :class:`StageError` naming the stage, the file and the fix.
    """
    root = Path(out)
    events = events or PipelineEvents()
    if only is not None and only not in STAGE_NAMES:
        raise StageError(only, f"no such stage; use one of {', '.join(STAGE_NAMES)}")
    if check:
        preflight_pending(config, root, only)
    root.mkdir(parents=True, exist_ok=True)
    digests: dict[str, str] = {}
    summaries: dict[str, dict[str, Any]] = {}
    outcomes = []
    for stage in STAGES:
        folder = root / stage.name
        key = stage_key(stage.name, _version(), _json(stage.section(config)), {i: digests[i] for i in stage.inputs})
        done = is_finished(folder, key)
        if only is not None and stage.name != only:
            if done is None and stage.name in _needed(only):
                raise StageError(
                    only, f"needs the {stage.name} stage's output, and {folder} holds no finished run of this "
                    f"config: run `trace-envs pipeline CONFIG --stage {stage.name}` first (or the whole pipeline)",
                )  # fmt: skip
            if done is not None:
                digests[stage.name], summaries[stage.name] = str(done.digest), done.summary
            continue
        if done is not None:
            outcome = StageOutcome(stage.name, "cached", done.summary)
        else:
            resumed = begin(folder, stage.name, key)
            events.stage_started(stage.name, "resumed" if resumed else "ran")

            def status(text: str, n: int | None, total: int | None, name: str = stage.name) -> None:
                events.stage_status(name, text, n, total)

            ctx = StageContext(stage.name, config, root, folder, resumed, summaries, status)
            summary = stage.run(ctx)
            done = finish(folder, stage.name, key, summary)
            outcome = StageOutcome(stage.name, "resumed" if resumed else "ran", summary)
        digests[stage.name], summaries[stage.name] = str(done.digest), done.summary
        outcomes.append(outcome)
        events.stage_finished(outcome)
        if only == stage.name:
            break
    return outcomes


def _needed(stage: str) -> set[str]:
    """Every stage ``stage`` reads, directly or through its inputs."""
    found: set[str] = set()
    pending = [stage]
    by_name = {s.name: s for s in STAGES}
    while pending:
        for name in by_name[pending.pop()].inputs:
            if name not in found:
                found.add(name)
                pending.append(name)
    return found
