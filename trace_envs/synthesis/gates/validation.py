"""Running the gates on a module: :func:`default_gates` in order, cheapest first, until one fails."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

from .context import Gate, GateContext
from .reports import Finding, GateResult, ValidationReport
from .source_text import module_bytes, read_module


def default_gates(calibrate: bool = False) -> list[Gate]:
    """Every gate, cheapest first, with calibration last when ``calibrate`` (imported here so each
    module stays independent)."""
    from .capability_check import capability_gate
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
        source_sha256=hashlib.sha256(module_bytes(source)).hexdigest(),
        target=context.target,
        capability=context.capability,
        results=results,
        seconds=time.perf_counter() - start,
    )


def validate_file(path: str | Path, context: GateContext, gates: Sequence[Gate] | None = None) -> ValidationReport:
    """:func:`validate_source` on a file's text (its name goes into the report)."""
    path = Path(path)
    try:
        source = read_module(path)  # bytes that are not UTF-8 stay visible: the parse gate names their line
    except FileNotFoundError:
        raise FileNotFoundError(f"module: {path} does not exist; pass the path of a Python file") from None
    context.filename = path.name
    return validate_source(source, context, gates)


def infer_target(source: str) -> str | None:
    """The one registered target whose own kit a module imports (``trace_envs.domains.<target>``), else None
    (a module that does not parse, or imports no or several targets' kits)."""
    found = targets_imported(source)
    return found[0] if len(found) == 1 else None


def targets_imported(source: str) -> list[str]:
    """The registered targets whose own kit the module imports (none for a module that does not parse)."""
    import ast

    from trace_envs.registry.targets import targets_importing

    from .ast_names import parse_module

    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError):
        return []
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.append(node.module or "")
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return targets_importing(modules)
