"""Stage caching: each stage's folder carries a marker with the hash of its inputs and config.

A stage's key is the sha256 (core's canonical JSON) of the cache format, its name, the package version, its
config section and the output digests of the stages it reads. Its marker (``.stage.json``) says ``running`` while it works and ``done`` with the
digest of everything it wrote when it finishes. A done marker whose key matches and whose folder still has
that digest means the stage is skipped; a marker of another key means its inputs changed, and the folder is
cleared before the stage runs again (so its own resume never mixes old and new work); a ``running`` marker of
the same key is a killed run, resumed in place.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from trace_envs.core.canonical import canonical_hash

MARKER = ".stage.json"


class StageMarker(BaseModel):
    """``<stage>/.stage.json``."""

    stage: str
    key: str
    status: Literal["running", "done"]
    digest: str | None = Field(default=None, description="sha256 of the stage folder's files (when done).")
    summary: dict[str, Any] = Field(default_factory=dict, description="What the stage produced, for the report.")


CACHE_FORMAT = 2
"""Part of every stage key: raised whenever the key's bytes change, so that an older run's markers no longer
match (their stages run again) instead of being read with another meaning. 2: the key is core's
:func:`~trace_envs.core.canonical_hash` (UTF-8 kept, no NaN), where 1 had an ASCII-escaped JSON of its own."""


def stage_key(stage: str, version: str, section: Any, inputs: dict[str, str]) -> str:
    """The hash of a stage's inputs (upstream digests by stage) and config, in this cache format."""
    payload = {"format": CACHE_FORMAT, "stage": stage, "version": version, "config": section, "inputs": inputs}
    return canonical_hash(payload)


def folder_digest(folder: Path) -> str:
    """sha256 over every file of ``folder`` (relative path and bytes, sorted), the marker excluded."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MARKER):
        digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def read_marker(folder: Path) -> StageMarker | None:
    """The stage's marker, or ``None`` if there is none (or it is torn: a killed write)."""
    try:
        return StageMarker.model_validate_json((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_marker(folder: Path, marker: StageMarker) -> None:
    """Write the marker atomically (a kill leaves the old one or the new one, never half)."""
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / (MARKER + ".tmp")
    temporary.write_text(marker.model_dump_json(indent=2), encoding="utf-8")
    os.replace(temporary, folder / MARKER)


def is_finished(folder: Path, key: str) -> StageMarker | None:
    """The done marker of ``key`` if the folder still holds what that run wrote, else ``None``."""
    marker = read_marker(folder)
    if marker is None or marker.status != "done" or marker.key != key:
        return None
    return marker if marker.digest == folder_digest(folder) else None


def begin(folder: Path, stage: str, key: str) -> bool:
    """Prepare ``folder`` for a run of ``key``: clear it if it holds work of another key (or of no known
    key); return whether earlier work of this key is resumed."""
    marker = read_marker(folder)
    resumed = marker is not None and marker.key == key
    if not resumed and folder.exists():
        shutil.rmtree(folder)
    write_marker(folder, StageMarker(stage=stage, key=key, status="running"))
    return resumed


def finish(folder: Path, stage: str, key: str, summary: dict[str, Any]) -> StageMarker:
    """Mark the stage done with the digest of what it wrote."""
    marker = StageMarker(stage=stage, key=key, status="done", digest=folder_digest(folder), summary=summary)
    write_marker(folder, marker)
    return marker
