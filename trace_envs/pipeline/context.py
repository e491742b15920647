"""What a stage function gets: the config, its own folder, the folders and summaries of the stages before it,
and a status callback for the progress display; and :class:`StageError`, the one-line failure of a stage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import PipelineConfig

Status = Callable[[str, int | None, int | None], None]
"""Called with (what is happening, done, total); ``None`` counts for a step without a count."""


class StageError(RuntimeError):
    """A stage that cannot go on: the message names the stage, the file and the fix."""

    def __init__(self, stage: str, message: str):
        super().__init__(f"stage {stage}: {message}")
        self.stage = stage


@dataclass
class StageContext:
    """One stage's view of the run."""

    name: str
    config: PipelineConfig
    root: Path
    folder: Path
    resumed: bool = False
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: Status | None = None

    def stage_dir(self, stage: str) -> Path:
        """The folder of another stage of this run."""
        return self.root / stage

    def report(self, text: str, done: int | None = None, total: int | None = None) -> None:
        if self.status is not None:
            self.status(text, done, total)

    def fail(self, message: str) -> StageError:
        return StageError(self.name, message)
