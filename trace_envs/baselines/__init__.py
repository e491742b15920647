"""The paper's comparison methods, each run on a matched rollout budget (iterations x G x K).

Every baseline writes its artifact (an adapter, a prompt) and a ``baseline.json`` (:class:`BaselineRun`)
beside it, so the evaluation report can put methods side by side on the same budget.
"""

from __future__ import annotations

from .record import BASELINE_FILE, BaselineRun, load_baseline_run, save_baseline_run

__all__ = ["BASELINE_FILE", "BaselineRun", "load_baseline_run", "save_baseline_run"]
