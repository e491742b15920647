"""The one-command TRACE pipeline: rollout -> analyze -> synthesize -> train -> route -> evaluate -> report,
configured by one YAML file, each stage cached under the output folder by a hash of its inputs and config.

    from trace_envs.pipeline import load_config, run_pipeline
    run_pipeline(load_config("trace.yaml"), "runs/trace")

``preflight(config, out)`` checks keys, endpoints, extras, data and disk space first (``run_pipeline`` does too).
Each stage returns a typed result (:mod:`trace_envs.pipeline.results`), found on ``StageOutcome.result``.
"""

from .config import ConfigError, PipelineConfig, load_config, parse_config
from .context import StageError
from .demo import DEMO_YAML, demo_config
from .preflight import Check, PreflightFailed, preflight
from .results import (
    AnalyzeResult,
    EvaluateResult,
    ReportResult,
    RolloutResult,
    RouteResult,
    StageResult,
    SynthesizeResult,
    TrainResult,
)
from .runner import STAGE_NAMES, STAGES, PipelineEvents, StageOutcome, pending_stages, run_pipeline

__all__ = [
    "DEMO_YAML",
    "STAGES",
    "STAGE_NAMES",
    "AnalyzeResult",
    "Check",
    "ConfigError",
    "EvaluateResult",
    "PipelineConfig",
    "PipelineEvents",
    "PreflightFailed",
    "ReportResult",
    "RolloutResult",
    "RouteResult",
    "StageError",
    "StageOutcome",
    "StageResult",
    "SynthesizeResult",
    "TrainResult",
    "demo_config",
    "load_config",
    "parse_config",
    "pending_stages",
    "preflight",
    "run_pipeline",
]
