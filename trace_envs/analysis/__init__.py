"""Contrastive capability analysis (TRACE step 1): from a trajectory store, find the capabilities the
agent lacks.

    from trace_envs.analysis import AnalysisConfig, run_analysis
    result = run_analysis("runs/x.jsonl", AnalysisConfig(analyst="probes", runs=1), "analysis/")
    result.kept  # e.g. ["precondition_verification"]
"""

from .agreement import agreement, cohen_kappa
from .known import known_capabilities, known_dictionary
from .label_store import LabelStore
from .models import (
    Agreement,
    AnalysisConfig,
    AnalysisResult,
    CapabilityDef,
    CapabilityDictionary,
    CapabilityLabel,
    CapabilityStats,
    CapabilitySummary,
    Label,
    RunStats,
    TrajectoryLabels,
)
from .probes import probe_labels, probe_table
from .runner import PROBES_ANALYST, arun_analysis, build_result, load_analysis, run_analysis
from .stats import capability_stats, kept_names, run_stats, summarize
from .trajectories import episode_id, render_trajectory

__all__ = [
    "PROBES_ANALYST",
    "Agreement",
    "AnalysisConfig",
    "AnalysisResult",
    "CapabilityDef",
    "CapabilityDictionary",
    "CapabilityLabel",
    "CapabilityStats",
    "CapabilitySummary",
    "Label",
    "LabelStore",
    "RunStats",
    "TrajectoryLabels",
    "agreement",
    "arun_analysis",
    "build_result",
    "capability_stats",
    "cohen_kappa",
    "episode_id",
    "kept_names",
    "known_capabilities",
    "known_dictionary",
    "load_analysis",
    "probe_labels",
    "probe_table",
    "render_trajectory",
    "run_analysis",
    "run_stats",
    "summarize",
]
