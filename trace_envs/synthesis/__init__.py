"""Environment synthesis: validation gates, the sandbox they run modules in, calibration, and reports.

    from trace_envs.synthesis import GateContext, validate_file
    report = validate_file("my_env.py", GateContext(target="retail", capability="precondition_verification"))
    print(report.table())

Gates run cheapest first (parse, static policy, contract, leakage, execution in a sandbox, the
capability check, and calibration when a policy is given) and the first failure stops the module.
Not imported by ``import trace_envs``.
"""

from .calibration import CalibrationSettings, CalibrationStats, calibration_stats
from .gates import TARGETS, Gate, GateContext, default_gates, named_gate, validate_file, validate_source
from .protocol import BlockedEvent, BoxResult, SandboxLimits, SandboxOutcome
from .report import Finding, GateResult, ValidationReport
from .sandbox import run_in_sandbox

__all__ = [
    "TARGETS",
    "BlockedEvent",
    "BoxResult",
    "CalibrationSettings",
    "CalibrationStats",
    "Finding",
    "Gate",
    "GateContext",
    "GateResult",
    "SandboxLimits",
    "SandboxOutcome",
    "ValidationReport",
    "calibration_stats",
    "default_gates",
    "named_gate",
    "run_in_sandbox",
    "validate_file",
    "validate_source",
]
