"""The one-command TRACE pipeline: rollout -> analyze -> synthesize -> train -> route -> evaluate -> report,
configured by one YAML file, each stage cached under the output folder by a hash of its inputs and config.

    from trace_envs.pipeline import load_config, run_pipeline
    run_pipeline(load_config("trace.yaml"), "runs/trace")
"""

from .config import ConfigError, PipelineConfig, load_config, parse_config
from .context import StageError
from .demo import DEMO_YAML, demo_config
from .runner import STAGE_NAMES, STAGES, PipelineEvents, StageOutcome, run_pipeline

__all__ = [
    "DEMO_YAML",
    "STAGES",
    "STAGE_NAMES",
    "ConfigError",
    "PipelineConfig",
    "PipelineEvents",
    "StageError",
    "StageOutcome",
    "demo_config",
    "load_config",
    "parse_config",
    "run_pipeline",
]
