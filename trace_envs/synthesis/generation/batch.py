"""One synthesis per kept capability of an analysis, in parallel (``trace-envs synthesize``).

Each synthesis runs in a thread of its own (the work is the generator's requests and the sandboxed
gates' subprocesses, so threads suffice); a generator or endpoint failure of one capability is
reported as that capability's error, and the others go on.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trace_envs.analysis.models import AnalysisResult

from .evidence import request_from_analysis
from .generators import Generator
from .loop import Progress, SynthesisResult, SynthesisSettings, synthesize


class SynthesisError(BaseModel):
    """A capability whose synthesis stopped on an error that is not the module's (the run can resume)."""

    capability: str
    error: str


def synthesize_analysis(
    analysis: AnalysisResult,
    target: str,
    generator: Generator,
    *,
    out: str | Path,
    capabilities: list[str] | None = None,
    jobs: int = 2,
    settings: SynthesisSettings | None = None,
    store: Path | None = None,
    base: Path | None = None,
    progress: Progress | None = None,
) -> list[SynthesisResult | SynthesisError]:
    """Synthesise every kept capability of ``analysis`` (or ``capabilities``), ``jobs`` at a time."""
    if jobs < 1:
        raise ValueError(f"jobs: need at least 1, got {jobs}")
    settings = settings or SynthesisSettings()
    names = capabilities if capabilities is not None else list(analysis.kept)
    requests = [
        request_from_analysis(analysis, name, target, store=store, base=base, budget=settings.budget) for name in names
    ]

    def one(request: Any) -> SynthesisResult | SynthesisError:
        try:
            return synthesize(request, target, generator, out=out, settings=settings, progress=progress)
        except Exception as exc:  # an endpoint or generator failure: report it, let the others finish
            return SynthesisError(capability=request.capability, error=f"{type(exc).__name__}: {exc}")

    build_shared_inputs()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, requests))


def build_shared_inputs() -> None:
    """Import every registered capability env and render the contract guide in this thread, before the
    worker threads start. Both parse source (pydantic reads attribute docstrings, ``inspect.getsource``
    and the guide use ``ast.parse``), and on CPython 3.11 two threads building ASTs at once fail with
    "AST constructor recursion depth mismatch"; the gates' own parsing is serialised
    (``ast_names.parse_module``), and the guide is cached, so the threads build no other AST."""
    from trace_envs.registry import env_class, list_capability_envs

    from .prompt import contract_guide

    for env_id in list_capability_envs():
        env_class(env_id)
    contract_guide()
