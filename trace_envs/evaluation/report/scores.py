"""The evaluation section of one ``results.json``: pass rate per policy and domain with bootstrap intervals,
per-capability gains over the base model, the paired comparisons and route-only evaluation."""

from __future__ import annotations

from pathlib import Path

from trace_envs.evaluation.results import OVERALL, DomainSummary, Estimate, EvaluationResults, PolicyEvaluation

from .figures import COLORS, pyplot, save
from .inputs import ReportInputs, Results, same_folder
from .sections import Plot, Section, Table, pct


def headline(summary: DomainSummary) -> tuple[str, Estimate]:
    """The metric a domain is judged on: device scenarios by mean similarity, tau2 by pass rate."""
    if summary.mean_similarity is not None:
        return "mean similarity", summary.mean_similarity
    return "pass rate", summary.pass_rate


def estimate_text(estimate: Estimate | None, percent: bool = True) -> str:
    """``45.0% [30.0%, 60.0%]`` (the interval in brackets, when there is one)."""
    if estimate is None:
        return "n/a"
    show = pct if percent else (lambda v: f"{v:.3f}")
    interval = f" [{show(estimate.interval.low)}, {show(estimate.interval.high)}]" if estimate.interval else ""
    return show(estimate.value) + interval


def _errors(estimates: list[Estimate]) -> list[list[float]]:
    low = [e.value - e.interval.low if e.interval else 0.0 for e in estimates]
    high = [e.interval.high - e.value if e.interval else 0.0 for e in estimates]
    return [[100 * max(0.0, v) for v in low], [100 * max(0.0, v) for v in high]]


def _summary(policy: PolicyEvaluation, domain: str) -> DomainSummary | None:
    return policy.summary.overall if domain == OVERALL else policy.summary.domains.get(domain)


def plot_pass_rates(results: EvaluationResults, path: Path) -> Path:
    """Grouped bars: each domain (and the union), one bar per policy, error bars the bootstrap interval; a
    second panel of mean similarity when the target is scored by it (the device)."""
    plt = pyplot()
    domains = [*results.target.domains, OVERALL] if len(results.target.domains) > 1 else [OVERALL]
    policies = results.policies
    similarity = any(p.summary.overall.mean_similarity is not None for p in policies)
    panels = [("pass rate", 100, "pass rate (%)")] + ([("mean similarity", 1, "mean similarity")] if similarity else [])
    width = 0.8 / max(1, len(policies))
    figure, axes = plt.subplots(1, len(panels), figsize=(max(6.0, 2.0 + 1.2 * len(domains) * len(panels)) + 2, 4))
    for axis, (metric, scale, label) in zip(axes if len(panels) > 1 else [axes], panels, strict=True):
        for index, policy in enumerate(policies):
            estimates = []
            for domain in domains:
                summary = _summary(policy, domain)
                found = None if summary is None else summary.pass_rate if scale == 100 else summary.mean_similarity
                estimates.append(found or Estimate(value=0.0))
            positions = [i + (index - (len(policies) - 1) / 2) * width for i in range(len(domains))]
            axis.bar(
                positions, [scale * e.value for e in estimates], width,
                yerr=[[v * scale / 100 for v in side] for side in _errors(estimates)], capsize=3,
                color=COLORS[index % len(COLORS)], label=policy.name,
            )  # fmt: skip
        axis.set_xticks(range(len(domains)), domains)
        axis.set(
            ylim=(0, 1.05 * scale), ylabel=label, title=f"{metric.capitalize()} per policy on {results.target.name}"
        )
    (axes[-1] if len(panels) > 1 else axes).legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(figure, path)


def base_policy(results: EvaluationResults) -> PolicyEvaluation | None:
    """The base model's evaluation (kind ``base``), the reference of every gain."""
    return next((p for p in results.policies if p.kind == "base"), None)


def capability_of(policy: PolicyEvaluation, inputs: ReportInputs) -> str:
    """The capability of a single-adapter policy (from its adapter's metadata when the run folder has it)."""
    for adapter in inputs.adapters:
        if policy.adapters and same_folder(policy.adapters[0], adapter.path):
            return adapter.metadata.capability
    return policy.name


def gains(results: EvaluationResults, inputs: ReportInputs) -> list[tuple[str, PolicyEvaluation, float]]:
    """(capability, policy, overall pass-rate gain over the base) for every single-adapter policy that is not
    a baseline's adapter."""
    base = base_policy(results)
    if base is None:
        return []
    out = []
    for policy in results.policies:
        if policy.kind == "adapter" and inputs.baseline_of(policy.adapters) is None:
            gain = policy.summary.overall.pass_rate.value - base.summary.overall.pass_rate.value
            out.append((capability_of(policy, inputs), policy, gain))
    return out


def plot_gains(rows: list[tuple[str, PolicyEvaluation, float]], base: str, path: Path) -> Path:
    """Horizontal bars: each capability adapter's overall pass-rate gain over the base (points)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7, 1.4 + 0.45 * len(rows)))
    names = [name for name, _, _ in rows][::-1]
    values = [100 * gain for _, _, gain in rows][::-1]
    axis.barh(names, values, color=["#2e8b57" if v >= 0 else "#c0392b" for v in values])
    axis.axvline(0, color="black", linewidth=0.8)
    axis.set(xlabel=f"pass rate gain over {base} (points)", title="Per-capability gain (base + one adapter)")
    return save(figure, path)


def evaluation_section(evaluation: Results, inputs: ReportInputs, out: Path, slug: str) -> Section:
    """The section of one ``results.json``; ``slug`` names its plot files."""
    results = evaluation.results
    target = results.target
    section = Section(f"evaluation-{slug}", f"Evaluation on {target.name}")
    section.paragraphs.append(
        f"{len(results.policies)} policies on {target.tasks} tasks ({', '.join(target.domains)}, split "
        f"{target.split}, from `{target.source}`), {results.trials} trial(s) per task (`{inputs.relative(evaluation.path)}`). "
        f"Intervals: {100 * results.bootstrap.confidence:.0f}% percentile bootstrap over tasks, "
        f"{results.bootstrap.resamples} resamples, seed {results.bootstrap.seed}."
    )
    if not results.policies:
        section.paragraphs.append("The results hold no policy yet.")
        return section
    table = Table(
        ["policy", "kind", "spec", "domain", "tasks", "pass rate [CI]", "pass^k", "similarity [CI]", "episodes"], []
    )
    for policy in results.policies:
        summaries = (
            [*policy.summary.domains.values(), policy.summary.overall]
            if len(policy.summary.domains) > 1
            else [policy.summary.overall]
        )
        for summary in summaries:
            pass_k = ", ".join(f"k={k}: {pct(v)}" for k, v in sorted(summary.pass_hat_k.items()))
            errors = f" ({policy.summary.errors} errors)" if policy.summary.errors else ""
            table.rows.append(
                [policy.name, policy.kind, f"`{policy.spec}`", summary.domain, str(summary.tasks),
                 estimate_text(summary.pass_rate), pass_k or "n/a", estimate_text(summary.mean_similarity, percent=False),
                 f"{policy.summary.episodes}{errors}"]
            )  # fmt: skip
    section.tables.append(table)
    section.plots.append(
        Plot(
            plot_pass_rates(results, out / f"pass_rate_{slug}.png"),
            "Pass rate per policy",
            "Each bar is a policy's pass rate (mean over tasks of the share of trials passed; on the device a "
            "pass is a perfect similarity, and the second panel shows the mean similarity) on a domain and on "
            "the union of domains; the whiskers are the bootstrap interval. Bars whose whiskers overlap are not "
            "clearly different: read the paired comparison below.",
        )
    )
    rows = gains(results, inputs)
    base = base_policy(results)
    if rows and base is not None:
        section.plots.append(
            Plot(
                plot_gains(rows, base.name, out / f"capability_gains_{slug}.png"),
                "Per-capability gains",
                f"How many points of overall pass rate each single capability adapter adds to `{base.name}` "
                "(green: a gain, red: a loss). The routed policy should at least match the best of them.",
            )
        )
    elif base is None and any(p.kind == "adapter" for p in results.policies):
        section.paragraphs.append("No base policy (kind `base`) was evaluated, so no adapter's gain can be shown.")
    if results.comparisons:
        paired = Table(
            [
                "candidate",
                "baseline",
                "domain",
                "tasks",
                "wins/losses/ties",
                "pass rate diff",
                "p (sign test)",
                "reward diff [CI]",
                "p (permutation)",
            ],
            [],
        )
        for c in results.comparisons:
            paired.rows.append(
                [c.candidate, c.baseline, c.domain, str(c.tasks), f"{c.wins}/{c.losses}/{c.ties}",
                 f"{100 * c.pass_rate_difference:+.1f} pts", f"{c.p_value:.3g}", estimate_text(c.reward_difference, percent=False),
                 f"{c.reward_p_value:.3g}"]
            )  # fmt: skip
        section.tables.append(paired)
    for route in results.routing:
        section.tables.append(
            Table(
                ["routed policy", "candidates", "solvable tasks", "router accuracy [CI]", "union ceiling [CI]", "routed pass rate"],
                [[route.routed, ", ".join(sorted(route.candidates)), str(route.solvable), estimate_text(route.accuracy),
                  estimate_text(route.union_ceiling), pct(route.routed_pass_rate)]],
            )
        )  # fmt: skip
    return section
