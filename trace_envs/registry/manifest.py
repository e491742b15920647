"""The one ``manifest.json`` model of a synthesis output folder, and its one reader.

Per validated module it records what it is, where it came from, what every gate said and its source's sha256;
per rejected capability, why. Loading a folder (:func:`trace_envs.load_envs`, ``$TRACE_ENVS_PATH``) reads it here to
check every module against it, synthesis writes it (:mod:`trace_envs.synthesis.manifest`) and the report reads it,
all through :class:`Manifest`: nothing else parses the file (``tests/test_registry_ids.py`` checks).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..llm.base import Usage
from ..problems import validation_problems

MANIFEST = "manifest.json"
"""The manifest's file name in a synthesis output folder."""
MANIFEST_FORMAT = "trace-envs/synthesis@1"
"""The ``format`` a trace-envs synthesis manifest declares (a ``manifest.json`` without it is another tool's)."""


class UnvalidatedModule(ValueError):
    """A module of a synthesis output folder is not the one its ``manifest.json`` vouches for (or the manifest is
    unreadable)."""


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
    """A synthesis output folder's ``manifest.json``: its validated modules by file name, its rejections by
    capability."""

    format: str = MANIFEST_FORMAT
    modules: dict[str, ModuleEntry] = Field(default_factory=dict)
    rejected: dict[str, Rejection] = Field(default_factory=dict)


def manifest_at(path: str | Path) -> Manifest | None:
    """The synthesis manifest in the file ``path`` (``None``: no such file, or another tool's ``manifest.json``);
    an :class:`UnvalidatedModule` naming the file and the fix when it is not valid JSON or not a valid manifest."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UnvalidatedModule(
            f"{path} is not valid JSON ({exc}); write the folder again with trace-envs synthesize"
        ) from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return None  # some other tool's manifest
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise UnvalidatedModule(
            f"{path} is not a trace-envs synthesis manifest ({validation_problems(exc, Manifest)}); write the folder "
            "again with trace-envs synthesize"
        ) from None


def read_manifest(folder: str | Path) -> Manifest | None:
    """The manifest of the folder ``folder`` (``None`` when it has none, or another tool's): :func:`manifest_at`."""
    return manifest_at(Path(folder) / MANIFEST)


def synthesis_manifest(folder: Path) -> Manifest | None:
    """The folder's trace-envs synthesis manifest as ``load_envs`` reads it (None: it has none, or another tool's);
    an unreadable one is refused, naming ``load_envs``."""
    try:
        return read_manifest(folder)
    except UnvalidatedModule as exc:
        raise UnvalidatedModule(f"load_envs: {exc}") from None


def validated_sources(folder: str | os.PathLike[str]) -> tuple[dict[Path, str], list[str]]:
    """Each module of a synthesis output folder as the text its manifest vouches for (read once: that text,
    not whatever the file holds later, is what runs), and one line per module it does not vouch for."""
    folder = Path(folder)
    manifest = synthesis_manifest(folder) or Manifest()
    sources: dict[Path, str] = {}
    problems = []
    for file in sorted(folder.glob("*.py")):
        if file.name.startswith("_"):
            continue
        entry = manifest.modules.get(file.name)
        if entry is None:
            problems.append(
                f"{file} is not in {folder / MANIFEST}: it was never validated; run "
                f"`trace-envs validate {file}` to validate and record it"
            )
            continue
        data = file.read_bytes()
        actual = hashlib.sha256(data).hexdigest()
        recorded = entry.source_sha256
        if actual != recorded:
            problems.append(
                f"{file} was edited since it was validated (sha256 {actual[:12]}…, manifest {recorded[:12]}…); "
                f"validate it again: `trace-envs validate {file}`"
            )
            continue
        try:
            sources[file] = data.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{file} is not UTF-8 text; validate it again: `trace-envs validate {file}`")
    return sources, problems


def unvalidated_modules(folder: str | os.PathLike[str]) -> list[str]:
    """One line per module of a synthesis output folder that its manifest does not vouch for (edited since
    it was validated, or never validated); empty for a folder without a synthesis manifest."""
    folder = Path(folder)
    try:
        if synthesis_manifest(folder) is None:
            return []
    except UnvalidatedModule as exc:
        return [str(exc)]
    return validated_sources(folder)[1]


__all__ = [
    "MANIFEST",
    "MANIFEST_FORMAT",
    "GateSummary",
    "Manifest",
    "ModuleEntry",
    "Rejection",
    "UnvalidatedModule",
    "manifest_at",
    "read_manifest",
    "synthesis_manifest",
    "unvalidated_modules",
    "validated_sources",
]
