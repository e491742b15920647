"""Run the stages in order, each cached under ``<out>/<stage>/`` (see :mod:`.cache`), or one stage alone.

Each stage returns its pydantic result model (:mod:`.results`); the runner refuses anything else, stores the result
in the stage's marker and parses a cached one back by the stage's type. A cached result that no longer parses (an
older shape) counts as not finished: the stage runs again, resuming the work its folder holds.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import ValidationError

from . import data_stages, final_stages, model_stages
from .cache import StageMarker, begin, finish, is_finished, stage_key
from .config import PipelineConfig
from .context import StageContext, StageError
from .results import StageResult

StageFn = Callable[[StageContext], StageResult]


@dataclass(frozen=True)
class Stage:
    """A stage: its function, the stages whose outputs it reads, and the config it depends on."""

    name: str
    run: StageFn
    inputs: tuple[str, ...]
    section: Callable[[PipelineConfig], Any]

    @property
    def result(self) -> type[StageResult]:
        """The model its function declares it returns: what the runner checks, caches and parses."""
        declared = get_type_hints(self.run).get("return")
        if not (isinstance(declared, type) and issubclass(declared, StageResult)):
            raise TypeError(f"stage {self.name}: {self.run.__qualname__} must declare a StageResult return type")
        return declared


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
    """What happened to one stage in a run: ``ran``, ``resumed`` (a killed run continued) or ``cached``; and the
    stage's typed result."""

    name: str
    action: str
    result: StageResult

    @property
    def summary(self) -> dict[str, Any]:
        """Deprecated: the result as plain JSON data; read :attr:`result` (a typed model) instead."""
        warnings.warn("StageOutcome.summary is deprecated; read StageOutcome.result", DeprecationWarning, stacklevel=2)
        return self.result.model_dump(mode="json")


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


@dataclass
class StageKeys:
    """The cache keys of one run, each computed once (a section such as synthesize's hashes files), once the
    digests of the stage's inputs are known; each stage's cache looked at once (a digest reads the whole folder);
    and the finished stages' digests and results, which their readers' keys and contexts use."""

    config: PipelineConfig
    version: str = field(default_factory=_version)
    digests: dict[str, str] = field(default_factory=dict)
    results: dict[str, StageResult] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    looked: dict[str, StageMarker | None] = field(default_factory=dict)

    def key(self, stage: Stage) -> str:
        """``stage``'s key: its name, the package version, its config section and its inputs' digests."""
        if stage.name not in self.keys:
            inputs = {name: self.digests[name] for name in stage.inputs}
            self.keys[stage.name] = stage_key(stage.name, self.version, _json(stage.section(self.config)), inputs)
        return self.keys[stage.name]

    def cached(self, stage: Stage, folder: Path) -> StageMarker | None:
        """The stage's finished run of its key whose result still parses as its type (recorded), else ``None``."""
        if stage.name not in self.looked:
            self.looked[stage.name] = self._look(stage, folder)
        return self.looked[stage.name]

    def _look(self, stage: Stage, folder: Path) -> StageMarker | None:
        done = is_finished(folder, self.key(stage))
        if done is None:
            return None
        try:
            result = stage.result.model_validate(done.summary)
        except ValidationError:
            return None  # an older shape of result: the stage runs again, resuming the work its folder holds
        self.settle(stage, done, result)
        return done

    def settle(self, stage: Stage, done: StageMarker, result: StageResult) -> None:
        """Record a finished stage's digest (its readers' keys use it) and result."""
        self.digests[stage.name], self.results[stage.name] = str(done.digest), result


def checked_result(stage: Stage, value: object) -> StageResult:
    """``value`` if it is ``stage``'s declared result model; a stage returning anything else (a dict) is a bug."""
    if not isinstance(value, stage.result):
        raise TypeError(
            f"stage {stage.name} returned {type(value).__name__}, not its declared {stage.result.__name__}: "
            "a stage returns its typed result model"
        )
    return value


def pending_stages(
    config: PipelineConfig, out: str | Path, only: str | None = None, keys: StageKeys | None = None
) -> tuple[str, ...]:
    """The stages a run would run (not cached): a stage whose input will run again runs too. ``keys`` keeps the
    keys and results it finds, for the run that follows."""
    root = Path(out)
    keys = keys or StageKeys(config)
    pending: list[str] = []
    for stage in STAGES:
        if any(name in pending for name in stage.inputs) or keys.cached(stage, root / stage.name) is None:
            pending.append(stage.name)
    return tuple(name for name in pending if only is None or name == only)


def preflight_pending(
    config: PipelineConfig, out: str | Path, only: str | None = None, keys: StageKeys | None = None
) -> None:
    """The preflight of the stages a run would run (cached ones need nothing); raises ``PreflightFailed``."""
    from .preflight import require_preflight

    pending = pending_stages(config, out, only, keys)
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
    keys = StageKeys(config)
    if check:
        preflight_pending(config, root, only, keys)
    root.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for stage in STAGES:
        folder = root / stage.name
        done = keys.cached(stage, folder)
        if only is not None and stage.name != only:
            if done is None and stage.name in _needed(only):
                raise StageError(
                    only, f"needs the {stage.name} stage's output, and {folder} holds no finished run of this "
                    f"config: run `trace-envs pipeline CONFIG --stage {stage.name}` first (or the whole pipeline)",
                )  # fmt: skip
            continue
        if done is not None:
            outcome = StageOutcome(stage.name, "cached", keys.results[stage.name])
        else:
            outcome = run_stage(stage, keys, root, events)
        outcomes.append(outcome)
        events.stage_finished(outcome)
        if only == stage.name:
            break
    return outcomes


def run_stage(stage: Stage, keys: StageKeys, root: Path, events: PipelineEvents) -> StageOutcome:
    """Run (or resume) one stage into ``root/<stage>/``, check its result's type and mark it done."""
    folder, key = root / stage.name, keys.key(stage)
    resumed = begin(folder, stage.name, key)
    action = "resumed" if resumed else "ran"
    events.stage_started(stage.name, action)

    def status(text: str, n: int | None, total: int | None) -> None:
        events.stage_status(stage.name, text, n, total)

    inputs = {name: keys.results[name] for name in stage.inputs if name in keys.results}
    ctx = StageContext(stage.name, keys.config, root, folder, resumed, inputs, status)
    result = checked_result(stage, stage.run(ctx))
    keys.settle(stage, finish(folder, stage.name, key, result.model_dump(mode="json")), result)
    return StageOutcome(stage.name, action, result)


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
