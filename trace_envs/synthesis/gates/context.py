"""The validation pipeline: gates run cheapest first and the first failure stops the module.

A gate is a function ``(module_source, context) -> GateResult`` with a ``gate_name``; a gate may read
what an earlier one left in ``context.evidence`` (the execution gate leaves the sandbox outcome there,
which the capability check reads). Calibration, which needs a policy, runs last and only when
``context.calibration`` asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from trace_envs.problems import warn_renamed
from trace_envs.registry.targets import target

from ..sandbox.protocol import SandboxLimits
from .calibration_settings import CalibrationSettings
from .play_seeds import DRAWN_SEEDS
from .reports import GateResult


@dataclass
class GateContext:
    """What the gates need to know besides the source: the request and the knobs."""

    target: str
    capability: str | None = None
    seeds: int = 50
    fuzz_examples: int = 50
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    data: Path | None = None
    """The target's data folder or file (``None``: its built-in tasks, or its environment variable's)."""
    filename: str = "<module>"
    flawed_failure_share: float = 0.2
    """Capability gate: the flawed solution must fail, as a near miss, on at least this share of seeds."""
    trusted_imports: tuple[str, ...] = ()
    """Packages the module may import besides the allow-list (the catalogue's shipped envs: generated_envs)."""
    calibration: CalibrationSettings | None = None
    """Calibration gate settings (the policy to play, seeds, samples, band); None: no calibration."""
    drawn_seeds: int = DRAWN_SEEDS
    """Seeds drawn at random on each run (besides the fixed ``seeds``) from the range use plays."""
    draw_seed: int | None = None
    """The seed of that draw (None: a fresh one each run; the report records the one used)."""
    evidence: dict[str, Any] = field(default_factory=dict)
    tau2_data: InitVar[Path | None] = None
    """Deprecated name of ``data``, kept for one release."""

    def __post_init__(self, tau2_data: Path | None) -> None:
        if tau2_data is not None:
            warn_renamed("tau2_data", "data", "GateContext.")
            self.data = tau2_data
        try:
            target(self.target)
        except ValueError as exc:
            raise ValueError(f"target: {exc}") from None
        if self.seeds < 1:
            raise ValueError(f"seeds: need at least 1 seed, got {self.seeds}")
        if self.drawn_seeds < 0:
            raise ValueError(f"drawn_seeds: need 0 or more seeds, got {self.drawn_seeds}")
        if self.fuzz_examples < 1:
            raise ValueError(f"fuzz_examples: need at least 1 example, got {self.fuzz_examples}")
        if not 0.0 < self.flawed_failure_share <= 1.0:
            raise ValueError(f"flawed_failure_share: a share in (0, 1] is needed, got {self.flawed_failure_share}")


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
