"""The evaluation's plots: pass rate (and, on the device, mean similarity) per policy and domain, and each
capability adapter's gain over the base model. Every bar carries its value, so zero reads as zero."""

from __future__ import annotations

from typing import Any

from trace_envs.evaluation.results import OVERALL, DomainSummary, Estimate, EvaluationResults, PolicyEvaluation

from .figures import COLORS, percent_axis, pyplot

LABEL_ROOM = 1.12
"""The top of a bar panel, as a share of the scale's top: room for the value label of a full bar (and its
interval's whisker) inside the plot, not on its top border."""


def _summary(policy: PolicyEvaluation, domain: str) -> DomainSummary | None:
    return policy.summary.overall if domain == OVERALL else policy.summary.domains.get(domain)


def _errors(estimates: list[Estimate], scale: float) -> list[list[float]]:
    low = [e.value - e.interval.low if e.interval else 0.0 for e in estimates]
    high = [e.interval.high - e.value if e.interval else 0.0 for e in estimates]
    return [[scale * max(0.0, v) for v in low], [scale * max(0.0, v) for v in high]]


def domains_of(results: EvaluationResults) -> list[str]:
    """The bar groups: each domain and their union, or the union alone for a one-domain target."""
    return [*results.target.domains, OVERALL] if len(results.target.domains) > 1 else [OVERALL]


def has_similarity(results: EvaluationResults) -> bool:
    """Whether the target is scored by mean similarity too (the device), which gets its own panel."""
    return any(p.summary.overall.mean_similarity is not None for p in results.policies)


def zero_marks(axis: Any, positions: list[float], values: list[float], width: float, color: str) -> None:
    """A short thick line at 0 in the bar's colour for each bar of height 0 (which otherwise draws nothing)."""
    for position, value in zip(positions, values, strict=True):
        if value == 0:
            axis.plot([position - width / 2, position + width / 2], [0, 0], color=color, linewidth=3,
                      solid_capstyle="butt", clip_on=False)  # fmt: skip


def _panel(axis: Any, results: EvaluationResults, scale: float) -> None:
    """One bar per policy in each domain group: pass rate in % (``scale`` 100) or mean similarity (1)."""
    domains, policies = domains_of(results), results.policies
    width = 0.8 / max(1, len(policies))
    for index, policy in enumerate(policies):
        estimates = []
        for domain in domains:
            summary = _summary(policy, domain)
            found = None if summary is None else summary.pass_rate if scale == 100 else summary.mean_similarity
            estimates.append(found or Estimate(value=0.0))
        positions = [i + (index - (len(policies) - 1) / 2) * width for i in range(len(domains))]
        values = [scale * e.value for e in estimates]
        color = COLORS[index % len(COLORS)]
        bars = axis.bar(positions, values, width, yerr=_errors(estimates, scale), capsize=3, color=color,
                        label=policy.name)  # fmt: skip
        axis.bar_label(bars, labels=[f"{v:.0f}" if scale == 100 else f"{v:.2f}" for v in values], fontsize=7,
                       padding=2)  # fmt: skip
        zero_marks(axis, positions, values, width, color)
    axis.set_xticks(range(len(domains)), domains)


def pass_rate_figure(results: EvaluationResults) -> Any:
    """Grouped bars of pass rate (%) per policy and domain, whiskers the bootstrap interval; a second panel of
    mean similarity (0-1) when the target is scored by it."""
    plt = pyplot()
    panels = 2 if has_similarity(results) else 1
    groups = len(domains_of(results)) * max(1, len(results.policies))
    figure, axes = plt.subplots(1, panels, figsize=(2.0 + panels * max(3.5, 0.45 * groups) + 2, 4), squeeze=False)
    rate_axis = axes[0][0]
    _panel(rate_axis, results, 100)
    percent_axis(rate_axis)
    rate_axis.set_ylim(-4, 100 * LABEL_ROOM)
    rate_axis.set_title(f"Pass rate per policy on {results.target.name}")
    if panels == 2:
        similarity_axis = axes[0][1]
        _panel(similarity_axis, results, 1)
        similarity_axis.set_ylim(-0.04, LABEL_ROOM)
        similarity_axis.axhline(0, color="#bbbbbb", linewidth=0.8, zorder=0)
        similarity_axis.set(ylabel="mean similarity", title=f"Mean similarity per policy on {results.target.name}")
    axes[0][-1].legend(title="policy", fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def gains_figure(rows: list[tuple[str, PolicyEvaluation, float]], base: str) -> Any:
    """Horizontal bars: each capability adapter's overall pass-rate gain over the base policy (points),
    labelled with the value (``+0.0`` shows as a tick, not as nothing)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7, 1.4 + 0.45 * len(rows)))
    names = [f"{name} ({policy.name})" if policy.name != name else name for name, policy, _ in rows][::-1]
    values = [100 * gain for _, _, gain in rows][::-1]
    bars = axis.barh(names, values, color=["#2e8b57" if v >= 0 else "#c0392b" for v in values])
    axis.bar_label(bars, labels=[f"{v:+.1f}" for v in values], fontsize=8, padding=3)
    for position, value in enumerate(values):
        if value == 0:
            axis.plot([0], [position], marker="|", markersize=14, markeredgewidth=3, color="#2e8b57")
    axis.axvline(0, color="black", linewidth=0.8)
    limit = max([10.0, *(abs(v) * 1.25 for v in values)])
    axis.set_xlim(-limit, limit)
    axis.set(
        xlabel=f"pass rate gain over {base} (points)", title=f"Per-capability gain over {base} (base + one adapter)"
    )
    return figure
