"""Pass rate against rollouts spent (the paper's Figure 4): every evaluated method at the training rollouts
it spent, the base model at zero, so methods are compared at a matched budget."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_envs.evaluation.results import Estimate, PolicyEvaluation

from .figures import percent_axis, pyplot, save, style
from .inputs import ReportInputs, Results, same_folder
from .scores import headline
from .sections import Plot, Section


@dataclass
class Point:
    """One evaluated policy placed on the rollout axis."""

    method: str
    policy: str
    rollouts: int
    estimate: Estimate


def placement(policy: PolicyEvaluation, inputs: ReportInputs) -> tuple[str, int | None] | None:
    """(method, training rollouts spent) of a policy, or None when it is no method of Figure 4 (a scripted
    agent, one of TRACE's single adapters). The base sits at 0; a baseline's record (matched by its
    artifact folder or its method name) gives both; TRACE (the routed policy) and a merged adapter spend
    what their adapters spent. The results' own ``rollouts_spent`` wins over what the run folder says."""
    if policy.kind == "base":
        return "base", 0
    baseline = inputs.baseline_of(policy.adapters) or next(
        (b for b in inputs.baselines if b.run.method == policy.name), None
    )
    if baseline is not None:
        spent = policy.rollouts_spent if policy.rollouts_spent is not None else baseline.run.rollouts_used
        return baseline.run.method, spent
    if policy.kind not in ("routed", "merged"):
        return None
    method = "TRACE" if policy.kind == "routed" else policy.name
    if policy.rollouts_spent is not None:
        return method, policy.rollouts_spent
    matched = [a for a in inputs.adapters if any(same_folder(p, a.path) for p in policy.adapters)]
    if matched and len(matched) == len(policy.adapters) and all(a.rollouts is not None for a in matched):
        return method, sum(a.rollouts or 0 for a in matched)
    return method, None


def points(evaluation: Results, inputs: ReportInputs) -> tuple[list[Point], list[str]]:
    """The placed policies and the names of those whose rollouts are unknown (left off the plot)."""
    placed, unknown = [], []
    for policy in evaluation.results.policies:
        placed_as = placement(policy, inputs)
        if placed_as is None:
            continue
        method, rollouts = placed_as
        if rollouts is None:
            unknown.append(policy.name)
        else:
            placed.append(Point(method, policy.name, rollouts, headline(policy.summary.overall)[1]))
    return placed, unknown


def line_label(method: str, line: list[Point]) -> str:
    """A line's legend entry: its policies' names (as in the tables), with the method when it differs."""
    names = ", ".join(dict.fromkeys(p.policy for p in line))
    return names if names == method else f"{names} ({method})"


def scaling_figure(placed: list[Point], metric: str, title: str) -> Any:
    """One line per method through its points (sorted by rollouts), each starting at the base model's point;
    the base model is also a dashed level line, labelled with its policy's name."""
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(7, 4))
    base = next((p for p in placed if p.method == "base"), None)
    methods = list(dict.fromkeys(p.method for p in placed if p.method != "base"))
    scale = 100 if metric == "pass rate" else 1
    for index, method in enumerate(methods):
        own = sorted((p for p in placed if p.method == method), key=lambda p: p.rollouts)
        line = [base, *own] if base is not None else own
        values = [scale * p.estimate.value for p in line]
        low = [scale * (p.estimate.value - p.estimate.interval.low) if p.estimate.interval else 0.0 for p in line]
        high = [scale * (p.estimate.interval.high - p.estimate.value) if p.estimate.interval else 0.0 for p in line]
        axis.errorbar(
            [p.rollouts for p in line], values, yerr=[low, high], capsize=3, clip_on=False,
            label=line_label(method, own), **style(index),
        )  # fmt: skip
    if base is not None:
        axis.axhline(scale * base.estimate.value, color="#555555", linestyle=(0, (4, 4)), linewidth=1.2, zorder=3,
                     label=f"{base.policy} (0 rollouts)")  # fmt: skip  # on top: seen where a line runs level with it
    if scale == 100:
        percent_axis(axis)
    else:
        axis.set_ylim(-0.04, 1.04)
        axis.set_ylabel(metric)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set(xlabel="training rollouts spent", title=title)
    axis.legend(title="policy", fontsize=8, loc="best")
    return figure


def _caption(placed: list[Point], metric: str, target: str) -> str:
    base = next((p for p in placed if p.method == "base"), None)
    methods = list(dict.fromkeys(p.method for p in placed if p.method != "base"))
    lines = "; ".join(line_label(m, [p for p in placed if p.method == m]) for m in methods)
    start = f" from `{base.policy}` (the base model: 0 rollouts, also the dashed level)" if base is not None else ""
    return (
        f"{metric.capitalize()} on {target} against the training rollouts spent (iterations x G x K). Each line is "
        f"a method{start} to its {metric} after training: {lines}. Whiskers are bootstrap intervals; at the same "
        "rollout count, the higher line used its budget better."
    )


def scaling_section(inputs: ReportInputs, out: Path, slugs: list[str]) -> Section:
    """The section, one plot per evaluation (``missing`` without results or without a method to place)."""
    section = Section("scaling", "Pass rate against rollouts spent")
    if not inputs.evaluations:
        section.missing = "no evaluation results.json: run `trace-envs evaluate`"
        return section
    for evaluation, slug in zip(inputs.evaluations, slugs, strict=True):
        placed, unknown = points(evaluation, inputs)
        target = evaluation.results.target.name
        if unknown:
            section.paragraphs.append(
                f"{target}: left off for want of a rollout count: {', '.join(unknown)} (give them a baseline.json "
                "or rollouts_spent in results.json)."
            )
        if not any(p.method != "base" for p in placed):
            section.paragraphs.append(f"{target}: no trained method with a known rollout count to place.")
            continue
        metric = headline(evaluation.results.policies[0].summary.overall)[0]
        title = f"{metric.capitalize()} against rollouts spent on {target}"
        figure = scaling_figure(placed, metric, title)
        section.plots.append(Plot(save(figure, out / f"rollouts_{slug}.png"), title, _caption(placed, metric, target)))
    if not section.plots and not section.paragraphs:
        section.missing = "no evaluated method with a rollout count"
    return section
