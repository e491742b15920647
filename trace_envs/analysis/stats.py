"""Contrastive statistics (paper section 3.3): ER+, ER-, gap, coverage per capability and run, the
keep rule (gap >= delta and coverage >= rho), and the summary across repeated labelling runs.

Ratios are computed with exact fractions, so ``0.7 - 0.5`` meets ``delta = 0.2`` as it should, and
a ratio whose denominator is empty is ``None`` (undefined), never 0.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from .models import CapabilityStats, CapabilitySummary, Label, RunStats, TrajectoryLabels


def _exact(value: float) -> Fraction:
    """The decimal a user typed (0.2 -> 1/5), not the binary float's expansion."""
    return Fraction(repr(float(value)))


def _ratio(numerator: int, denominator: int) -> Fraction | None:
    return Fraction(numerator, denominator) if denominator else None


def capability_stats(
    rows: Iterable[tuple[bool, Label]],
    capability: str,
    *,
    delta: float = 0.20,
    rho: float = 0.10,
    require_contrast: bool = False,
) -> CapabilityStats:
    """Statistics of one capability from ``(success, label)`` rows, one per trajectory.

    When no successful trajectory needed the capability, ER+ and the gap are undefined (``None``).
    By default the keep rule then tests ER- against ``delta`` (nothing contradicts the deficit: every
    trajectory that needed it failed); ``require_contrast=True`` never keeps such a capability."""
    stats = CapabilityStats(capability=capability)
    for success, label in rows:
        label = Label(label)
        if success:
            stats.successes += 1
            stats.applicable_success += label != Label.NA
            stats.lacking_success += label == Label.LACKING
        else:
            stats.failures += 1
            stats.applicable_failure += label != Label.NA
            stats.lacking_failure += label == Label.LACKING
    er_plus = _ratio(stats.lacking_success, stats.applicable_success)
    er_minus = _ratio(stats.lacking_failure, stats.applicable_failure)
    gap = er_minus - er_plus if er_plus is not None and er_minus is not None else None
    coverage = _ratio(stats.lacking_failure, stats.failures)
    stats.er_plus = float(er_plus) if er_plus is not None else None
    stats.er_minus = float(er_minus) if er_minus is not None else None
    stats.gap = float(gap) if gap is not None else None
    stats.coverage = float(coverage) if coverage is not None else None
    stats.kept, stats.reason = _decide(gap, coverage, er_plus, er_minus, delta, rho, require_contrast)
    return stats


def _decide(
    gap: Fraction | None,
    coverage: Fraction | None,
    er_plus: Fraction | None,
    er_minus: Fraction | None,
    delta: float,
    rho: float,
    require_contrast: bool,
) -> tuple[bool, str]:
    if coverage is None:
        return False, "no failed trajectories: coverage undefined"
    if er_minus is None:
        return False, "not applicable to any failed trajectory: ER- undefined"
    if er_plus is None:
        if require_contrast:
            return False, "not applicable to any successful trajectory: ER+ undefined, so no contrast"
        contrast, what = er_minus, "ER+ undefined (no success needed it); ER-"
    else:
        assert gap is not None
        contrast, what = gap, "gap"
    if contrast < _exact(delta):
        return False, f"{what} {float(contrast):.3f} < delta {delta:g}"
    if coverage < _exact(rho):
        return False, f"coverage {float(coverage):.3f} < rho {rho:g}"
    return True, f"{what} {float(contrast):.3f} >= {delta:g} and coverage {float(coverage):.3f} >= {rho:g}"


def run_stats(
    labels: Sequence[TrajectoryLabels],
    capabilities: Sequence[str],
    *,
    run: int,
    delta: float = 0.20,
    rho: float = 0.10,
    require_contrast: bool = False,
) -> RunStats:
    """Per-capability statistics of one labelling run. A capability missing from a trajectory's
    labels counts as NA there."""
    out: dict[str, CapabilityStats] = {}
    for name in capabilities:
        rows = [(t.success, t.labels[name].label if name in t.labels else Label.NA) for t in labels]
        out[name] = capability_stats(rows, name, delta=delta, rho=rho, require_contrast=require_contrast)
    return RunStats(run=run, capabilities=out)


def _quartiles(values: list[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return median, q1, q3


def summarize(
    runs: Sequence[RunStats], capabilities: Sequence[str], *, min_selection: float = 0.5
) -> list[CapabilitySummary]:
    """Selection frequency over runs, median and IQR of coverage (runs where it is defined), and
    the final keep decision: selected in at least ``min_selection`` of the runs."""
    summaries = []
    for name in capabilities:
        per_run = [r.capabilities[name] for r in runs if name in r.capabilities]
        selected = sum(s.kept for s in per_run)
        coverages = [s.coverage for s in per_run if s.coverage is not None]
        gaps = [s.gap for s in per_run if s.gap is not None]
        median, q1, q3 = _quartiles(coverages)
        total = len(runs)
        summaries.append(
            CapabilitySummary(
                capability=name,
                runs=total,
                selected=selected,
                selection_frequency=selected / total if total else 0.0,
                coverage_median=median,
                coverage_q1=q1,
                coverage_q3=q3,
                gap_median=statistics.median(gaps) if gaps else None,
                kept=bool(total) and Fraction(selected, total) >= _exact(min_selection),
            )
        )
    return summaries


def kept_names(summaries: Sequence[CapabilitySummary]) -> list[str]:
    """Kept capabilities, most often selected first, then by median coverage, then by name."""
    kept = [s for s in summaries if s.kept]
    kept.sort(key=lambda s: (-s.selection_frequency, -(s.coverage_median or 0.0), s.capability))
    return [s.capability for s in kept]


def label_table(labels: Sequence[TrajectoryLabels]) -> Mapping[int, list[TrajectoryLabels]]:
    """Labels grouped by run."""
    runs: dict[int, list[TrajectoryLabels]] = {}
    for row in labels:
        runs.setdefault(row.run, []).append(row)
    return dict(sorted(runs.items()))
