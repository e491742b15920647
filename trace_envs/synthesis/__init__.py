"""Environment synthesis: validation gates, the sandbox they run modules in, and their reports.

    from trace_envs.synthesis import GateContext, validate_file
    report = validate_file("my_env.py", GateContext(target="retail", capability="precondition_verification"))
    print(report.table())

Gates run cheapest first (parse, static policy, contract, leakage, execution in a sandbox) and the
first failure stops the module. Not imported by ``import trace_envs``.
"""

from .gates import TARGETS, Gate, GateContext, named_gate
from .protocol import BlockedEvent, BoxResult, SandboxLimits, SandboxOutcome
from .report import Finding, GateResult, ValidationReport
from .sandbox import run_in_sandbox
from .validation import default_gates, validate_file, validate_source

__all__ = [
    "TARGETS",
    "BlockedEvent",
    "BoxResult",
    "Finding",
    "Gate",
    "GateContext",
    "GateResult",
    "SandboxLimits",
    "SandboxOutcome",
    "ValidationReport",
    "default_gates",
    "named_gate",
    "run_in_sandbox",
    "validate_file",
    "validate_source",
]
