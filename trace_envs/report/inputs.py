"""What a report is made of: the outputs a run folder holds (analysis, synthesis manifest, adapters,
baseline records, evaluation results), found by their file names anywhere under the folder."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trace_envs.analysis.models import AnalysisResult
    from trace_envs.baselines.record import BaselineRun
    from trace_envs.evaluation.results import EvaluationResults
    from trace_envs.registry.manifest import Manifest
    from trace_envs.routing.routes_file import RoutedTask
    from trace_envs.training.config import TrainConfig
    from trace_envs.training.metadata import AdapterMetadata

SKIPPED_DIRS = ("checkpoints", "__pycache__", "site-packages", "node_modules")
"""Folders never searched (nor hidden ones, nor ``checkpoint-*``): trainer checkpoints hold copies of an
adapter's files, and a virtual environment or cache holds no run output."""


ANALYSIS_FILE = "analysis.json"
"""The file ``trace-envs analyze`` writes into its output folder."""


class ReportInputError(ValueError):
    """A file of the run folder is not what its name says; the message names the file and the fix."""


@dataclass
class Adapter:
    """A trained adapter: its folder and its ``trace_adapter.json``."""

    path: Path
    metadata: AdapterMetadata

    @property
    def train_config(self) -> TrainConfig | None:
        """The :class:`~trace_envs.training.config.TrainConfig` it ran with (None when its config is not one)."""
        from pydantic import ValidationError

        from trace_envs.training.config import TrainConfig

        try:
            return TrainConfig.model_validate(self.metadata.config)
        except ValidationError:
            return None

    @property
    def rollouts(self) -> int | None:
        """Rollouts its training spent: steps done x rollouts per step (None without a config)."""
        config = self.train_config
        return None if config is None else self.metadata.steps_done * config.rollouts_per_step

    @property
    def budget(self) -> int | None:
        """Rollouts its full run would spend: iterations x G x K (None without a config)."""
        config = self.train_config
        return None if config is None else config.rollout_budget


@dataclass
class Baseline:
    """A baseline run: its folder and its ``baseline.json``."""

    path: Path
    run: BaselineRun


@dataclass
class Results:
    """An evaluation: its folder and its ``results.json``."""

    path: Path
    results: EvaluationResults


@dataclass
class Analysis:
    """A capability analysis: its ``analysis.json`` and the target it is about (its folder's name)."""

    path: Path
    result: AnalysisResult

    @property
    def target(self) -> str:
        return self.path.parent.name


@dataclass
class SynthesisManifest:
    """A synthesis manifest: its ``manifest.json`` (each module and rejection names its own target)."""

    path: Path
    manifest: Manifest


@dataclass
class Routes:
    """The router's choices for a target's rollout tasks: a ``<target>.routes.json``."""

    path: Path
    target: str
    routed: list[RoutedTask]


@dataclass
class ReportInputs:
    """Everything a report can show; each part is optional and the report says which are missing.

    ``targets`` orders the per-target parts (the pipeline passes its config's order); targets it does not
    name follow by name."""

    root: Path | None = None
    evaluations: list[Results] = field(default_factory=list)
    analyses: list[Analysis] = field(default_factory=list)
    manifests: list[SynthesisManifest] = field(default_factory=list)
    adapters: list[Adapter] = field(default_factory=list)
    baselines: list[Baseline] = field(default_factory=list)
    routes: list[Routes] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)

    def target_rank(self, name: str) -> tuple[int, str]:
        """Sort key of a target: its place in :attr:`targets` (``tau2-airline`` is ``airline``), then its name."""
        for index, target in enumerate(self.targets):
            if same_target(name, target):
                return index, name
        return len(self.targets), name

    def adapter_labels(self) -> list[str]:
        """A unique name per adapter, used in every table and legend: its capability, with its target (its
        folder's parent, as the pipeline lays them out) when two share a capability, else its path."""
        capabilities = [a.metadata.capability for a in self.adapters]
        labels = [
            c if capabilities.count(c) == 1 else f"{c} ({a.path.parent.name})"
            for c, a in zip(capabilities, self.adapters, strict=True)
        ]
        return [
            n if labels.count(n) == 1 else self.relative(a.path) for n, a in zip(labels, self.adapters, strict=True)
        ]

    def routes_of(self, target: str) -> Routes | None:
        """The routes file of ``target`` (``tau2-airline`` finds ``airline.routes.json``), if any."""
        return next((r for r in self.routes if same_target(target, r.target)), None)

    def baseline_of(self, folders: list[str]) -> Baseline | None:
        """The baseline whose folder holds one of ``folders`` (a policy's adapters), if any."""
        for baseline in self.baselines:
            if any(same_folder(folder, baseline.path / baseline.run.artifact) for folder in folders):
                return baseline
        return None

    def sort_by_target(self) -> None:
        """Order each per-target part by :meth:`target_rank` (adapters by their target folder, then path)."""
        self.evaluations.sort(key=lambda e: self.target_rank(e.results.target.name))
        self.analyses.sort(key=lambda a: self.target_rank(a.target))
        self.routes.sort(key=lambda r: self.target_rank(r.target))
        self.adapters.sort(key=lambda a: (self.target_rank(a.path.parent.name), str(a.path)))
        self.manifests.sort(key=lambda m: self.target_rank(m.path.parent.name))

    def relative(self, path: Path) -> str:
        """``path`` relative to the run folder when it lies inside it (what the report prints)."""
        if self.root is not None and path.is_relative_to(self.root):
            return str(path.relative_to(self.root)) or "."
        return str(path)


def same_target(name: str, other: str) -> bool:
    """Whether two target names mean one target: the evaluation's ``tau2-airline`` is the pipeline's ``airline``."""
    return name.removeprefix("tau2-") == other.removeprefix("tau2-")


def same_folder(named: str, found: Path) -> bool:
    """Whether a folder named in results (absolute, or relative to wherever the command ran) is ``found``:
    the same resolved path, or ``found``'s path ends with the named parts."""
    parts = Path(named).parts
    return bool(parts) and (Path(named).resolve() == found.resolve() or found.resolve().parts[-len(parts) :] == parts)


def _searched(name: str) -> bool:
    return not (name in SKIPPED_DIRS or name.startswith((".", "checkpoint-")))


def find_files(root: Path, name: str, *, suffix: bool = False) -> list[Path]:
    """Files called ``name`` (or, with ``suffix``, whose names end with it) under ``root`` in sorted path
    order; :data:`SKIPPED_DIRS`, hidden and ``checkpoint-*`` folders are not entered."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if _searched(d)]
        found += [Path(folder) / f for f in files if (f.endswith(name) and f != name if suffix else f == name)]
    return sorted(found)


def _problem(path: Path, exc: Exception, what: str) -> ReportInputError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ReportInputError(f"{path}: not {what} ({first}); rewrite it with the command that made it, or remove it")


def _read_json(path: Path) -> Any:
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _problem(path, exc, "readable JSON") from None


def load_adapter(path: Path) -> Adapter:
    """The adapter whose ``trace_adapter.json`` is at ``path``."""
    from trace_envs.training.metadata import AdapterMetadata

    try:
        return Adapter(path.parent, AdapterMetadata.model_validate(_read_json(path)))
    except ValueError as exc:
        if isinstance(exc, ReportInputError):
            raise
        raise _problem(path, exc, "an adapter's metadata (trace-envs train writes it)") from None


def load_baseline(path: Path) -> Baseline:
    """The baseline run whose ``baseline.json`` is at ``path``."""
    from trace_envs.baselines.record import load_baseline_run

    try:
        return Baseline(path.parent, load_baseline_run(path.parent))
    except ValueError as exc:
        raise ReportInputError(f"{exc}; rerun the baseline that wrote it, or remove it") from None


def collect_inputs(run_dir: str | Path, targets: list[str] | None = None) -> ReportInputs:
    """Read every output under ``run_dir``: every evaluation, analysis, synthesis manifest, routes file,
    adapter and baseline record. A ``results.json`` or ``manifest.json`` of another format (another tool's)
    is passed over, and an adapter inside a baseline's folder belongs to that baseline, not to TRACE.
    ``targets`` orders the per-target parts (see :class:`ReportInputs`). (The pipeline's report stage hands the
    report the records its stages returned instead, see :mod:`trace_envs.pipeline.final_stages`.)"""
    from trace_envs.registry.manifest import MANIFEST
    from trace_envs.training.metadata import METADATA_FILE

    root = Path(run_dir)
    if not root.is_dir():
        raise ReportInputError(f"{root} is not a folder: pass the run folder the pipeline (or each command) wrote")
    inputs = ReportInputs(root=root, targets=list(targets or []))
    inputs.evaluations = _evaluations(root)
    inputs.analyses = [load_analysis(path) for path in find_files(root, ANALYSIS_FILE)]
    inputs.manifests = [m for m in map(load_manifest, find_files(root, MANIFEST)) if m is not None]
    inputs.routes = _routes(root)
    inputs.baselines = find_baselines(root)
    for path in find_files(root, METADATA_FILE):
        if not any(path.is_relative_to(b.path) for b in inputs.baselines):  # a baseline's own adapter
            inputs.adapters.append(load_adapter(path))
    inputs.sort_by_target()
    return inputs


def find_baselines(root: Path) -> list[Baseline]:
    """Every baseline record (``baseline.json``) under ``root``."""
    from trace_envs.baselines.record import BASELINE_FILE

    return [load_baseline(path) for path in find_files(root, BASELINE_FILE)]


def _evaluations(root: Path) -> list[Results]:
    from trace_envs.evaluation.results import RESULTS_FILE, RESULTS_FORMAT

    found = []
    for path in find_files(root, RESULTS_FILE):
        data = _read_json(path)
        if isinstance(data, dict) and data.get("format") == RESULTS_FORMAT:
            found.append(load_evaluation(path))
    return found


def load_evaluation(path: Path) -> Results:
    """The evaluation whose ``results.json`` is at ``path``."""
    from trace_envs.evaluation.results import load_results

    try:
        return Results(path.parent, load_results(path))
    except (ValueError, FileNotFoundError) as exc:
        raise ReportInputError(f"{exc}; rerun `trace-envs evaluate`, or remove it") from None


def load_analysis(path: Path) -> Analysis:
    """The capability analysis whose ``analysis.json`` is at ``path``."""
    from trace_envs.analysis.models import AnalysisResult

    try:
        return Analysis(path, AnalysisResult.model_validate(_read_json(path)))
    except ValueError as exc:
        raise _problem(path, exc, "an analysis result (trace-envs analyze writes it)") from None


def load_manifest(path: Path) -> SynthesisManifest | None:
    """The synthesis manifest at ``path``; ``None`` for a ``manifest.json`` of another format (another tool's)."""
    from trace_envs.registry.manifest import manifest_at

    try:
        manifest = manifest_at(path)
    except (OSError, ValueError) as exc:
        raise _problem(path, exc, "a synthesis manifest (trace-envs synthesize writes it)") from None
    return None if manifest is None else SynthesisManifest(path, manifest)


def _routes(root: Path) -> list[Routes]:
    from trace_envs.routing.routes_file import ROUTES_SUFFIX

    return [load_routes_file(path) for path in find_files(root, ROUTES_SUFFIX, suffix=True)]


def load_routes_file(path: Path) -> Routes:
    """The router's choices in the ``<target>.routes.json`` at ``path``."""
    from trace_envs.routing.routes_file import load_routes, routes_target

    try:
        return Routes(path, routes_target(path), load_routes(path))
    except ValueError as exc:
        raise _problem(path, exc, "a routes file (the pipeline's route stage writes it)") from None
