"""The validation pipeline: gates run cheapest first and the first failure stops the module.

A gate is a function ``(module_source, context) -> GateResult`` with a ``gate_name``. Later gates
(the capability check, calibration) plug in by being added to the list; a gate may read what an
earlier one left in ``context.evidence`` (the execution gate leaves the sandbox outcome there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from .protocol import SandboxLimits
from .report import GateResult

TARGETS = ("airline", "retail", "device")
"""Target domains a synthesised module may be written for (each has a ``trace_envs.domains.<target>``)."""


@dataclass
class GateContext:
    """What the gates need to know besides the source: the request and the knobs."""

    target: str
    capability: str | None = None
    seeds: int = 50
    fuzz_examples: int = 50
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    tau2_data: Path | None = None
    filename: str = "<module>"
    evidence: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target: unknown target {self.target!r}; use one of {', '.join(TARGETS)}")
        if self.seeds < 1:
            raise ValueError(f"seeds: need at least 1 seed, got {self.seeds}")
        if self.fuzz_examples < 1:
            raise ValueError(f"fuzz_examples: need at least 1 example, got {self.fuzz_examples}")


class Gate(Protocol):
    gate_name: str

    def __call__(self, source: str, context: GateContext) -> GateResult: ...


GateFunction = Callable[[str, GateContext], GateResult]


def named_gate(name: str) -> Callable[[GateFunction], Gate]:
    """Mark a function as the gate called ``name`` (the name reports and the table use)."""

    def mark(function: GateFunction) -> Gate:
        function.gate_name = name  # type: ignore[attr-defined]
        return cast(Gate, function)

    return mark
