"""The validation pipeline: gates run cheapest first and the first failure stops the module.

A gate is a function ``(module_source, context) -> GateResult`` with a ``gate_name``; a gate may read
what an earlier one left in ``context.evidence`` (the execution gate leaves the sandbox outcome there,
which the capability check reads). Calibration, which needs a policy, runs last and only when
``context.calibration`` asks for it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from .protocol import SandboxLimits
from .report import Finding, GateResult, ValidationReport

if TYPE_CHECKING:
    from .calibration import CalibrationSettings

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
    flawed_failure_share: float = 0.2
    """Capability gate: the flawed solution must fail, as a near miss, on at least this share of seeds."""
    trusted_imports: tuple[str, ...] = ()
    """Packages the module may import besides the allow-list (the catalogue's shipped envs: generated_envs)."""
    calibration: CalibrationSettings | None = None
    """Calibration gate settings (the policy to play, seeds, samples, band); None: no calibration."""
    evidence: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target: unknown target {self.target!r}; use one of {', '.join(TARGETS)}")
        if self.seeds < 1:
            raise ValueError(f"seeds: need at least 1 seed, got {self.seeds}")
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


def default_gates(calibrate: bool = False) -> list[Gate]:
    """Every gate, cheapest first, with calibration last when ``calibrate`` (imported here so each
    module stays independent)."""
    from .capability import capability_gate
    from .contract import contract_gate
    from .execution import execution_gate
    from .leakage import leakage_gate
    from .static_policy import parse_gate, static_policy_gate

    gates = [parse_gate, static_policy_gate, contract_gate, leakage_gate, execution_gate, capability_gate]
    if calibrate:
        from .calibration import calibration_gate

        gates.append(calibration_gate)
    return gates


def validate_source(source: str, context: GateContext, gates: Sequence[Gate] | None = None) -> ValidationReport:
    """Run ``gates`` (default: :func:`default_gates`, with calibration when ``context.calibration`` is
    set) in order until one fails; the rest are skipped."""
    gates = list(gates) if gates is not None else default_gates(calibrate=context.calibration is not None)
    start = time.perf_counter()
    results: list[GateResult] = []
    stopped: str | None = None
    for gate in gates:
        if stopped is not None:
            results.append(GateResult(gate=gate.gate_name, status="skipped", details={"note": f"stopped by {stopped}"}))
            continue
        gate_start = time.perf_counter()
        try:
            result = gate(source, context)
        except Exception as exc:  # a gate bug must not read as the module's fault, nor crash validation
            result = GateResult(
                gate=gate.gate_name,
                status="failed",
                findings=[
                    Finding(
                        rule="gate-error",
                        message=f"the {gate.gate_name} gate itself failed: {type(exc).__name__}: {exc}.",
                        fix="This is a bug in trace-envs; please report it with the module.",
                    )
                ],
            )
        result.seconds = time.perf_counter() - gate_start
        results.append(result)
        if result.status == "failed":
            stopped = gate.gate_name
    return ValidationReport(
        module=context.filename,
        source_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
        target=context.target,
        capability=context.capability,
        results=results,
        seconds=time.perf_counter() - start,
    )


def validate_file(path: str | Path, context: GateContext, gates: Sequence[Gate] | None = None) -> ValidationReport:
    """:func:`validate_source` on a file's text (its name goes into the report)."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"module: {path} does not exist; pass the path of a Python file") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"module: {path} is not UTF-8 text ({exc.reason}); pass a Python source file") from None
    context.filename = path.name
    return validate_source(source, context, gates)
