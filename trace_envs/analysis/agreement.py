"""Check an analyst's labels against the offline probes: per capability both know, the share of
trajectories where the labels match, Cohen's kappa and the confusion table."""

from __future__ import annotations

from collections.abc import Sequence

from trace_envs.rollout.store import EpisodeRecord

from .models import Agreement, Label, TrajectoryLabels
from .probes import probe_labels, probe_table
from .trajectories import episode_id


def cohen_kappa(pairs: Sequence[tuple[Label, Label]]) -> float | None:
    """Cohen's kappa of two labellers; ``None`` when undefined (no pairs, or chance agreement is 1)."""
    if not pairs:
        return None
    total = len(pairs)
    observed = sum(a == b for a, b in pairs) / total
    expected = sum(
        (sum(a == label for a, _ in pairs) / total) * (sum(b == label for _, b in pairs) / total) for label in Label
    )
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def agreement(labels: Sequence[TrajectoryLabels], records: Sequence[EpisodeRecord]) -> list[Agreement]:
    """Agreement of every labelling run's rows with the probes, per probed capability in the labels."""
    probed = {episode_id(r): probe_labels(r) for r in records}
    probed_names = probe_table()
    names = sorted({name for row in labels for name in row.labels if name in probed_names})
    out = []
    for name in names:
        pairs: list[tuple[Label, Label]] = []
        for row in labels:
            probe = probed.get(row.episode, {}).get(name)
            if probe is not None and name in row.labels:
                pairs.append((row.labels[name].label, probe.label))
        confusion = {a.value: {b.value: 0 for b in Label} for a in Label}
        for a, b in pairs:
            confusion[a.value][b.value] += 1
        agree = sum(a == b for a, b in pairs)
        out.append(
            Agreement(
                capability=name,
                compared=len(pairs),
                agree=agree,
                accuracy=agree / len(pairs) if pairs else None,
                kappa=cohen_kappa(pairs),
                confusion=confusion,
            )
        )
    return out
