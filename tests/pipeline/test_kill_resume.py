"""The pipeline killed in each stage resumes and finishes with the same artifacts, without repeating finished work.

Each test starts from the demo run's finished earlier stages, runs ``trace-envs demo --stage NAME`` in a
subprocess, SIGKILLs it (and its children) once the stage's first finished piece of work is on disk, then
reruns the same command: the stage's summary must equal the uninterrupted run's, and what was finished before
the kill (store lines, labels, modules, adapters, routes) must be kept as it was, not done again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trace_envs.pipeline import STAGE_NAMES

from .conftest import copy_through, run_until, trace_envs

BOOKKEEPING = {"skipped", "reused", "curve"}
"""Result fields that say how a run went (what it found finished; an adapter's training log, with its wall-clock
timings), not what it produced."""


def _summary(folder: Path) -> dict[str, Any]:
    """The stage's result, bookkeeping left out and paths inside the run folder (a base model, a data folder)
    written relative to it, as two runs in two folders are compared."""
    text = (folder / ".stage.json").read_text().replace(str(folder.parent), "RUN")
    marker = json.loads(text)
    assert marker["status"] == "done"
    return _strip(marker["summary"])


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in BOOKKEEPING}
    return value


def _complete_lines(path: Path) -> bytes:
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1]


def _jsonl_with_a_line(folder: Path, pattern: str) -> Callable[[], bool]:
    return lambda: any(_complete_lines(p) for p in folder.glob(pattern))


def _finished_adapter(folder: Path) -> bool:
    for meta in folder.glob("*/*/trace_adapter.json"):
        try:
            if json.loads(meta.read_text())["status"] == "complete":
                return True
        except (ValueError, KeyError, OSError):
            continue
    return False


def _passed_module(folder: Path) -> bool:
    for manifest in folder.glob("*/manifest.json"):
        try:
            if json.loads(manifest.read_text()).get("modules"):
                return True
        except (ValueError, OSError):
            continue
    return False


# stage -> (when to kill it, the files whose finished content must survive the resume)
KILL_POINTS: dict[str, tuple[Callable[[Path], Callable[[], bool]], str]] = {
    "rollout": (lambda f: _jsonl_with_a_line(f, "*.jsonl"), "*.jsonl"),
    "analyze": (lambda f: _jsonl_with_a_line(f, "*/labels.jsonl"), "*/labels.jsonl"),
    "synthesize": (lambda f: lambda: _passed_module(f), "*/*.py"),
    "train": (lambda f: lambda: _finished_adapter(f), "*/*/adapter_model.safetensors"),
    "route": (lambda f: lambda: any(f.glob("*.routes.json")), "*.routes.json"),
    "evaluate": (lambda f: _jsonl_with_a_line(f, "*/episodes/*.jsonl"), "*/episodes/*.jsonl"),
    "report": (lambda f: lambda: any(f.glob("*.png")), "report.md"),
}


def _uninterrupted(reference: Path, stage: str, clean: Path) -> Path:
    """The stage's folder in an uninterrupted run: the demo's, except for the report, which links the adapters
    named in results.json to the ones in its own folder, so it is compared with a clean run on a copy too."""
    if stage != "report":
        return reference / stage
    copy_through(reference, clean, list(STAGE_NAMES[: STAGE_NAMES.index(stage)]))
    result = trace_envs("demo", "--out", str(clean), "--stage", stage)
    assert result.returncode == 0, result.stdout[-3000:]
    return clean / stage


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_a_stage_killed_midway_resumes_to_the_same_result(stage: str, demo_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reference, _ = demo_run
    earlier = list(STAGE_NAMES[: STAGE_NAMES.index(stage)])
    out = copy_through(reference, tmp_path / "run", earlier)
    markers = {name: (out / name / ".stage.json").read_bytes() for name in earlier}
    folder = out / stage
    ready, kept_pattern = KILL_POINTS[stage]
    killed = run_until(["demo", "--out", str(out), "--stage", stage], ready(folder))
    assert killed, f"the {stage} stage finished before its first piece of work could be seen"
    assert json.loads((folder / ".stage.json").read_text())["status"] == "running"
    before = {p: _complete_lines(p) if p.suffix == ".jsonl" else p.read_bytes() for p in folder.glob(kept_pattern)}
    stamps = {p: p.stat().st_mtime_ns for p in before if p.suffix != ".jsonl"}

    result = trace_envs("demo", "--out", str(out), "--stage", stage)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"{stage}" in result.stdout and "resumed" in result.stdout
    expected_folder = _uninterrupted(reference, stage, tmp_path / "clean")
    assert _summary(folder) == _summary(expected_folder)
    for path, content in before.items():  # finished work kept, not done again
        if path.suffix == ".jsonl":
            assert path.read_bytes().startswith(content), f"{path}: lines finished before the kill were rewritten"
        elif stage != "report":  # the report is one piece of work: it is written again whole
            assert path.stat().st_mtime_ns == stamps[path], f"{path} was written again after the kill"
    assert {name: (out / name / ".stage.json").read_bytes() for name in earlier} == markers  # earlier stages untouched
    files = sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "checkpoint" not in str(p)
    )
    expected = sorted(
        p.relative_to(expected_folder).as_posix()
        for p in expected_folder.rglob("*") if p.is_file() and "checkpoint" not in str(p)
    )  # fmt: skip
    assert files == expected
