"""The record every baseline writes beside its artifact: which method, on what, and the rollouts it spent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

BASELINE_FILE = "baseline.json"


class BaselineRun(BaseModel):
    """One baseline run: the method, what it trained or optimised on, and its rollout budget and spend."""

    model_config = ConfigDict(extra="forbid")

    method: str = Field(description="Baseline name, as in `trace-envs baseline NAME`.")
    env_ids: list[str] = Field(default_factory=list, description="Envs it trained, optimised or collected on.")
    base_model: str = Field(default="", description="Base model id or directory ('' when none was used).")
    budget: int | None = Field(default=None, ge=1, description="Rollout budget it was given (None: unbounded).")
    rollouts_used: int = Field(ge=0, description="Episodes it rolled out, counted as iterations x G x K.")
    artifact: str = Field(description="What it produced, relative to the run folder (adapter dir, prompt file).")
    config: dict[str, Any] = Field(default_factory=dict, description="The settings it ran with.")


def save_baseline_run(out_dir: str | Path, run: BaselineRun) -> Path:
    """Write ``baseline.json`` in ``out_dir`` (created when missing)."""
    path = Path(out_dir) / BASELINE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(run.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def load_baseline_run(out_dir: str | Path) -> BaselineRun:
    """Read ``baseline.json`` from ``out_dir``; a missing or malformed file names the path and the problem."""
    path = Path(out_dir) / BASELINE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: is {out_dir} a folder written by `trace-envs baseline`?")
    try:
        return BaselineRun.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        from trace_envs.problems import validation_problems

        raise ValueError(f"{path}: not a baseline record ({validation_problems(exc, BaselineRun)})") from None
