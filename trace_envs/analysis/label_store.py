"""Labels written as they come: one JSON line per (run, trajectory), appended and flushed, so a
killed labelling job resumes where it stopped. A torn last line (a kill mid-write) is skipped with a warning and
its labels are made again."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from pydantic import ValidationError

from trace_envs.rollout.store import StoreWarning

from .models import TrajectoryLabels


class LabelStore:
    """``labels.jsonl`` of :class:`TrajectoryLabels`; the last line for a (run, episode) wins."""

    def __init__(self, path: str | Path, *, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync

    def load(self) -> dict[tuple[int, str], TrajectoryLabels]:
        """Every stored label row by (run, episode)."""
        rows: dict[tuple[int, str], TrajectoryLabels] = {}
        if not self.path.exists():
            return rows
        lines = self.path.read_bytes().split(b"\n")
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                row = TrajectoryLabels.model_validate_json(raw)
            except ValidationError:
                torn = number == len(lines)
                what = "a torn last line left by an interrupted write" if torn else "a line that is not a label row"
                warnings.warn(
                    f"{self.path}:{number}: skipping {what}; its labels are made again",
                    StoreWarning,
                    stacklevel=2,
                )
                continue
            rows[(row.run, row.episode)] = row
        return rows

    def append(self, row: TrajectoryLabels) -> None:
        """Append one row (cutting off a torn last line first)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as reader:
                reader.seek(-1, os.SEEK_END)
                torn = reader.read(1) != b"\n"
            if torn:
                data = self.path.read_bytes()
                os.truncate(self.path, data.rfind(b"\n") + 1)
        with open(self.path, "ab") as handle:
            handle.write(row.model_dump_json().encode("utf-8") + b"\n")
            handle.flush()
            if self.fsync:
                os.fsync(handle.fileno())
