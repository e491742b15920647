"""Evaluate policies on a target (tau2 airline/retail, device scenarios): k trials per task, pass rate and
pass^k, mean similarity and perfect rate, bootstrap intervals, paired tests and route-only evaluation.

The results models (:mod:`.results`) are what ``results.json`` holds; the report and the pipeline read them.
"""

from __future__ import annotations

from .results import (
    BASE_ROUTE,
    OVERALL,
    RESULTS_FILE,
    RESULTS_FORMAT,
    BootstrapSettings,
    DomainSummary,
    Estimate,
    EvaluationResults,
    Interval,
    PairedComparison,
    PolicyEvaluation,
    PolicySummary,
    RouteEvaluation,
    RouteTask,
    StoreRef,
    TargetInfo,
    TaskScore,
    TrialOutcome,
    load_results,
    save_results,
)

__all__ = [
    "BASE_ROUTE",
    "OVERALL",
    "RESULTS_FILE",
    "RESULTS_FORMAT",
    "BootstrapSettings",
    "DomainSummary",
    "Estimate",
    "EvaluationResults",
    "Interval",
    "PairedComparison",
    "PolicyEvaluation",
    "PolicySummary",
    "RouteEvaluation",
    "RouteTask",
    "StoreRef",
    "TargetInfo",
    "TaskScore",
    "TrialOutcome",
    "load_results",
    "save_results",
]
