"""What analysis saw of a capability, as a :class:`~trace_envs.synthesis.generation.prompt.SynthesisRequest`: its
description, the failure patterns (the analyst's rationales for LACKING labels on failures) and a few
failed trajectories that lacked it, read from the trajectory store and trimmed to a budget."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from trace_envs.analysis.models import AnalysisResult, Label
from trace_envs.analysis.trajectories import episode_id, render_trajectory

from .prompt import PromptBudget, SynthesisRequest, failure_patterns


def _store_path(analysis: AnalysisResult, store: Path | None, base: Path | None) -> Path | None:
    """The trajectory store: the one given, else the analysis's own (as written, or beside analysis.json)."""
    if store is not None:
        return store
    if not analysis.store:
        return None
    recorded = Path(analysis.store)
    if recorded.exists() or recorded.is_absolute() or base is None:
        return recorded
    return base / recorded


def request_from_analysis(
    analysis: AnalysisResult,
    capability: str,
    target: str,
    *,
    store: Path | None = None,
    base: Path | None = None,
    budget: PromptBudget | None = None,
) -> SynthesisRequest:
    """The synthesis request for one capability of ``analysis`` (``base``: the folder of analysis.json,
    against which a relative store path is also tried)."""
    budget = budget or PromptBudget()
    definition = analysis.dictionary.get(capability)
    if definition is None:
        raise ValueError(
            f"capability: {capability!r} is not in the analysis dictionary ({', '.join(analysis.dictionary.names)})"
        )
    lacking = [
        row
        for row in analysis.labels
        if not row.success and capability in row.labels and row.labels[capability].label == Label.LACKING
    ]
    rationales = [row.labels[capability].rationale for row in lacking]
    votes = Counter(row.episode for row in lacking)
    notes: list[str] = []
    excerpts: list[str] = []
    path = _store_path(analysis, store, base)
    if budget.excerpts and votes:
        if path is None or not path.exists():
            notes.append(
                f"no failed-trajectory excerpts: the trajectory store {path or '(none recorded)'} was not found"
            )
        else:
            from trace_envs.rollout.store import load_episodes

            by_id = {episode_id(record): record for record in load_episodes(path)}
            chosen = [e for e, _ in sorted(votes.items(), key=lambda item: (-item[1], item[0])) if e in by_id]
            chosen = chosen[: budget.excerpts]
            if len(chosen) < min(budget.excerpts, len(votes)):
                notes.append(f"{len(votes) - len(chosen)} labelled episodes are missing from {path}")
            each = max(200, budget.excerpt_tokens // max(1, len(chosen)))
            excerpts = [render_trajectory(by_id[e], token_budget=each) for e in chosen]
    return SynthesisRequest(
        capability=capability,
        description=definition.description,
        target=target,
        failure_patterns=failure_patterns(rationales, budget.patterns),
        excerpts=excerpts,
        notes=notes,
    )
