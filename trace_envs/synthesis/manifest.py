"""``manifest.json`` of a synthesis output folder: per validated module, what it is, where it came from,
what every gate said and its source's sha256; per rejected capability, why.

Loading a folder that holds a manifest (``trace_envs.load_envs``, ``$TRACE_ENVS_PATH``) checks every
module against it, so a module edited since it was validated is refused until it is validated again
(``trace-envs validate`` records the new hash); the check itself lives in :mod:`trace_envs.plugins`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from trace_envs.llm.base import Usage
from trace_envs.plugins import SYNTHESIS_FORMAT, SYNTHESIS_MANIFEST, UnvalidatedModule, unvalidated_modules

from .gates import env_identity as identity
from .gates.reports import ValidationReport

if TYPE_CHECKING:
    from .gates.context import GateContext

MANIFEST = SYNTHESIS_MANIFEST
MANIFEST_FORMAT = SYNTHESIS_FORMAT
ModuleChanged = UnvalidatedModule
"""A module of a synthesis folder differs from what was validated (or was never validated)."""
_LOCK = threading.Lock()


class GateSummary(BaseModel):
    """One gate's result as the manifest keeps it."""

    gate: str
    status: str
    seconds: float
    findings: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class ModuleEntry(BaseModel):
    """A validated module."""

    module: str = Field(description="File name in the folder, e.g. unit_conversion.py")
    env_id: str = Field(description="The id it registers as (trace/<capability with dashes>-v0).")
    capability: str
    target: str
    generator: str
    prompt_sha256: str | None = Field(default=None, description="sha256 of the first generation prompt.")
    attempts: int = 1
    gates: list[GateSummary]
    calibration: dict[str, Any] | None = Field(default=None, description="Calibration statistics, if calibrated.")
    cost_usd: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    source_sha256: str
    notes: list[str] = Field(default_factory=list)


class Rejection(BaseModel):
    """A capability whose synthesis never passed (nothing was registered for it)."""

    capability: str
    target: str
    generator: str
    prompt_sha256: str | None = None
    attempts: int = 0
    stopped_by: str | None = None
    reason: str
    findings: list[str] = Field(default_factory=list)
    cost_usd: float = 0.0


class Manifest(BaseModel):
    format: str = MANIFEST_FORMAT
    modules: dict[str, ModuleEntry] = Field(default_factory=dict)
    rejected: dict[str, Rejection] = Field(default_factory=dict)


def env_id_for(capability: str) -> str:
    """The id ``load_envs`` registers a module's env as: ``trace/<capability with dashes>-v0``."""
    return identity.env_id_for(capability)


def gate_summaries(report: ValidationReport) -> list[GateSummary]:
    return [
        GateSummary(
            gate=r.gate,
            status=r.status,
            seconds=round(r.seconds, 3),
            findings=[f.render() for f in r.findings],
            details=r.details,
        )
        for r in report.results
    ]


def read_manifest(folder: str | Path) -> Manifest | None:
    """The folder's manifest, or None when it has none."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        return None
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path} is not a trace-envs synthesis manifest: {exc}") from None


def _write(folder: Path, manifest: Manifest) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / (MANIFEST + ".tmp")
    temporary.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, folder / MANIFEST)


def record_module(folder: str | Path, entry: ModuleEntry) -> None:
    """Add (or replace) a validated module's entry; a rejection of the same capability is dropped."""
    folder = Path(folder)
    with _LOCK:
        manifest = read_manifest(folder) or Manifest()
        manifest.modules[entry.module] = entry
        manifest.rejected.pop(entry.capability, None)
        _write(folder, manifest)


def record_rejection(folder: str | Path, rejection: Rejection) -> None:
    """Record why a capability was rejected (its module, if an earlier run wrote one, stays)."""
    folder = Path(folder)
    with _LOCK:
        manifest = read_manifest(folder) or Manifest()
        manifest.rejected[rejection.capability] = rejection
        _write(folder, manifest)


def verify_folder(folder: str | Path) -> None:
    """Raise :class:`ModuleChanged` naming every module the manifest does not vouch for (no-op without
    one): what :func:`trace_envs.load_envs` checks before importing anything of the folder."""
    problems = unvalidated_modules(folder)
    if problems:
        raise ModuleChanged("refusing to load " + "; ".join(problems))


def record_validated(path: str | Path, report: ValidationReport, context: GateContext) -> bool:
    """Record a module that passed ``trace-envs validate`` in the manifest of its folder, if it has one
    (a new hash for an edited module, a new entry for a hand-written one); returns whether it did."""
    path = Path(path)
    manifest = read_manifest(path.parent)
    execution = context.evidence.get("execution")
    info = execution.result.module if execution is not None and execution.result is not None else None
    if manifest is None or not report.passed or info is None:
        return False
    previous = manifest.modules.get(path.name)
    calibration = next((r.details for r in report.results if r.gate == "calibration"), None)
    entry = ModuleEntry(
        module=path.name,
        env_id=identity.declared_env_id(info.env_id, info.capability),  # the execution gate checked it against the text
        capability=info.capability,
        target=report.target,
        generator=previous.generator if previous else "hand-written",
        prompt_sha256=previous.prompt_sha256 if previous else None,
        attempts=previous.attempts if previous else 0,
        gates=gate_summaries(report),
        calibration=calibration,
        cost_usd=previous.cost_usd if previous else 0.0,
        usage=previous.usage if previous else Usage(),
        source_sha256=report.source_sha256,
        notes=[*(previous.notes if previous else []), "validated again with trace-envs validate"],
    )
    record_module(path.parent, entry)
    return True
