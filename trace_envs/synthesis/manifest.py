"""Writing ``manifest.json`` of a synthesis output folder: each validated module's entry, each rejection.

The model and its one reader are :mod:`trace_envs.registry.manifest` (re-exported here). Loading a folder that
holds a manifest (``trace_envs.load_envs``, ``$TRACE_ENVS_PATH``) checks every module against it, so a module
edited since it was validated is refused until it is validated again (``trace-envs validate`` records the new
hash); the check itself lives in :mod:`trace_envs.registry.sources`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from trace_envs.llm.base import Usage
from trace_envs.registry.ids import capability_env_id
from trace_envs.registry.manifest import (
    MANIFEST,
    MANIFEST_FORMAT,
    GateSummary,
    Manifest,
    ModuleEntry,
    Rejection,
    UnvalidatedModule,
    manifest_at,
    unvalidated_modules,
)

from .gates import env_identity as identity
from .gates.reports import ValidationReport

if TYPE_CHECKING:
    from .gates.context import GateContext

ModuleChanged = UnvalidatedModule
"""A module of a synthesis folder differs from what was validated (or was never validated)."""
_LOCK = threading.Lock()


def env_id_for(capability: str) -> str:
    """The id ``load_envs`` registers a module's env as: ``trace/<capability with dashes>-v0``."""
    return capability_env_id(capability)


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
    """The folder's manifest, or None when it has none (:func:`trace_envs.registry.manifest.manifest_at`); a
    ``manifest.json`` of another tool is refused, so that writing one never replaces it."""
    path = Path(folder) / MANIFEST
    found = manifest_at(path)
    if found is None and path.exists():
        raise ValueError(f"{path} is not a trace-envs synthesis manifest (its format is not {MANIFEST_FORMAT!r})")
    return found


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


__all__ = [
    "MANIFEST",
    "MANIFEST_FORMAT",
    "GateSummary",
    "Manifest",
    "ModuleChanged",
    "ModuleEntry",
    "Rejection",
    "env_id_for",
    "gate_summaries",
    "read_manifest",
    "record_module",
    "record_rejection",
    "record_validated",
    "verify_folder",
]
