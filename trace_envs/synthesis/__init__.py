"""Environment synthesis: a generation loop with repair, validation gates, the sandbox they run modules
in, calibration, and the output folder's manifest.

    from trace_envs.synthesis import synthesize
    result = synthesize("precondition_verification", "retail", "anthropic:claude-sonnet-4-6", out="envs/")

    from trace_envs.synthesis import GateContext, validate_file
    report = validate_file("my_env.py", GateContext(target="retail", capability="precondition_verification"))
    print(report.table())

Gates run cheapest first (parse, static policy, contract, leakage, execution in a sandbox, the
capability check, and calibration when a policy is given) and the first failure stops the module.
Not imported by ``import trace_envs``.
"""

from .batch import SynthesisError, synthesize_analysis
from .calibration import CalibrationSettings, CalibrationStats, calibration_stats
from .catalogue import CatalogueGenerator, NoCatalogueEnv
from .factory import make_generator
from .gates import Gate, GateContext, named_gate
from .generators import Generation, Generator, ModelGenerator
from .loop import SynthesisResult, SynthesisSettings, synthesize
from .manifest import Manifest, ModuleChanged, read_manifest, verify_folder
from .prompt import PromptBudget, SynthesisRequest, generation_prompt
from .protocol import BlockedEvent, BoxResult, SandboxLimits, SandboxOutcome
from .report import Finding, GateResult, ValidationReport
from .sandbox import run_in_sandbox
from .validation import default_gates, validate_file, validate_source

__all__ = [
    "BlockedEvent",
    "BoxResult",
    "CalibrationSettings",
    "CalibrationStats",
    "CatalogueGenerator",
    "Finding",
    "Gate",
    "GateContext",
    "GateResult",
    "Generation",
    "Generator",
    "Manifest",
    "ModelGenerator",
    "ModuleChanged",
    "NoCatalogueEnv",
    "PromptBudget",
    "SandboxLimits",
    "SandboxOutcome",
    "SynthesisError",
    "SynthesisRequest",
    "SynthesisResult",
    "SynthesisSettings",
    "ValidationReport",
    "calibration_stats",
    "default_gates",
    "generation_prompt",
    "make_generator",
    "named_gate",
    "read_manifest",
    "run_in_sandbox",
    "synthesize",
    "synthesize_analysis",
    "validate_file",
    "validate_source",
    "verify_folder",
]
