"""What a stage function gets: the config, its own folder, the folders and typed results of the stages before it,
a status callback for the progress display, and :meth:`StageContext.each_target`, which hands a stage body one
target at a time; and :class:`StageError`, the one-line failure of a stage."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .config import PipelineConfig
from .results import StageResult

Status = Callable[[str, int | None, int | None], None]
"""Called with (what is happening, done, total); ``None`` counts for a step without a count."""

ResultT = TypeVar("ResultT", bound=StageResult)


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
    results: dict[str, StageResult] = field(default_factory=dict)
    status: Status | None = None

    def stage_dir(self, stage: str) -> Path:
        """The folder of another stage of this run."""
        return self.root / stage

    @property
    def summaries(self) -> dict[str, dict[str, Any]]:
        """Deprecated: the earlier stages' results as plain JSON data; read :meth:`result` (typed) instead."""
        import warnings

        warnings.warn("StageContext.summaries is deprecated; use StageContext.result", DeprecationWarning, stacklevel=2)
        return {name: found.model_dump(mode="json") for name, found in self.results.items()}

    def result(self, kind: type[ResultT]) -> ResultT:
        """The result of the earlier stage that returns ``kind`` (the runner passes a stage the results it reads)."""
        for found in self.results.values():
            if isinstance(found, kind):
                return found
        raise self.fail(f"reads the {kind.__name__} of an earlier stage, which this run does not have")

    def report(self, text: str, done: int | None = None, total: int | None = None) -> None:
        """Tell the progress display what the stage is doing (with a count when there is one)."""
        if self.status is not None:
            self.status(text, done, total)

    def fail(self, message: str) -> StageError:
        """The :class:`StageError` of this stage (raise it)."""
        return StageError(self.name, message)

    def each_target(self) -> Iterator[TargetStep]:
        """Each configured target in order, with its folder in this stage's and its own report line."""
        for name in self.config.targets:
            yield TargetStep(self, name)


@dataclass(frozen=True)
class TargetStep:
    """One target of a stage: its name, its folder (``<stage>/<target>/``), the same target's folder in another
    stage, and a report line prefixed with its name, so that a stage body handles one target."""

    ctx: StageContext
    name: str

    @property
    def folder(self) -> Path:
        """``<stage>/<target>/``."""
        return self.ctx.folder / self.name

    def input_dir(self, stage: str) -> Path:
        """This target's folder in an earlier stage (``<stage>/<target>/``)."""
        return self.ctx.stage_dir(stage) / self.name

    def report(self, text: str, done: int | None = None, total: int | None = None) -> None:
        """``<target>: <text>`` on the progress display."""
        self.ctx.report(f"{self.name}: {text}", done, total)
