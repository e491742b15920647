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

from .gates.calibration import CalibrationSettings, CalibrationStats, calibration_stats
from .gates.context import Gate, GateContext, named_gate
from .gates.reports import Finding, GateResult, ValidationReport
from .gates.validation import default_gates, validate_file, validate_source
from .generation.batch import SynthesisError, synthesize_analysis
from .generation.catalogue import CatalogueGenerator, NoCatalogueEnv
from .generation.factory import make_generator
from .generation.generators import Generation, Generator, ModelGenerator
from .generation.loop import SynthesisResult, SynthesisSettings, synthesize
from .generation.prompt import PromptBudget, SynthesisRequest, generation_prompt
from .manifest import Manifest, ModuleChanged, read_manifest, verify_folder
from .sandbox.process import run_in_sandbox
from .sandbox.protocol import BlockedEvent, BoxResult, SandboxLimits, SandboxOutcome

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
