"""The evaluation section of one ``results.json``: which tasks were used, pass rate per policy and domain
with bootstrap intervals, per-capability gains over the base model, the paired comparisons and the routing.
A policy is named the same way everywhere: its name from the results, with its spec in the table."""

from __future__ import annotations

from pathlib import Path

from trace_envs.evaluation.results import DomainSummary, Estimate, EvaluationResults, PolicyEvaluation, TargetInfo

from .figures import save
from .inputs import ReportInputs, Results, same_folder
from .routing import route_table
from .score_plots import gains_figure, has_similarity, pass_rate_figure
from .sections import Plot, Section, Table, pct

KIND_WORDS = {
    "scripted": "scripted agent",
    "model": "API model",
    "base": "base model",
    "adapter": "base model + one adapter",
    "merged": "merged adapters",
    "routed": "routed adapters (TRACE)",
}
"""What each policy kind is, in words (``base`` alone would read as 'the base agent' of the rollout)."""


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


def tasks_text(target: TargetInfo) -> str:
    """Which tasks an evaluation used: ``the first 9 of 48 device tasks (split all)``, so a pass rate can be
    compared with the rollout's on all of them."""
    domains = ", ".join(target.domains)
    if target.limit is not None and target.available is not None and target.tasks < target.available:
        per = " per domain" if len(target.domains) > 1 else ""
        return f"the first {target.limit}{per} of {target.available} {domains} tasks ({target.tasks} in all, split {target.split})"
    if target.available is not None:
        return f"all {target.tasks} {domains} tasks (split {target.split})"
    return f"{target.tasks} {domains} tasks (split {target.split})"


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


def _scores_table(results: EvaluationResults) -> Table:
    table = Table(
        [
            "policy",
            "what",
            "spec",
            "decoding",
            "domain",
            "tasks",
            "pass rate [CI]",
            "pass^k",
            "similarity [CI]",
            "episodes",
        ],
        [],
    )
    for policy in results.policies:
        domains = policy.summary.domains
        summaries = [*domains.values(), policy.summary.overall] if len(domains) > 1 else [policy.summary.overall]
        for summary in summaries:
            pass_k = ", ".join(f"k={k}: {pct(v)}" for k, v in sorted(summary.pass_hat_k.items()))
            errors = f" ({policy.summary.errors} errors)" if policy.summary.errors else ""
            table.rows.append(
                [policy.name, KIND_WORDS.get(policy.kind, policy.kind), f"`{policy.spec}`", policy.decoding, summary.domain,
                 str(summary.tasks), estimate_text(summary.pass_rate), pass_k or "n/a",
                 estimate_text(summary.mean_similarity, percent=False), f"{policy.summary.episodes}{errors}"]
            )  # fmt: skip
    return table


def _pass_rate_plot(results: EvaluationResults, out: Path, slug: str) -> Plot:
    target = results.target
    groups = (
        f"each domain and their union ({target.tasks} evaluated tasks)"
        if len(target.domains) > 1
        else f"its {target.tasks} evaluated tasks"
    )
    panel, similarity = "", ""
    if has_similarity(results):
        panel = "Left panel: "
        similarity = (
            " Right panel: each policy's mean similarity (0 to 1: the share of the scenario's milestones reached), "
            "which credits partial progress the pass rate does not."
        )
    caption = (
        f"{panel}the pass rate of each policy on {target.name}, over {groups}: the % of a task's trials passed, "
        "averaged over tasks. Each bar is labelled with its value (at the end of its whisker, the bootstrap "
        f"interval); a bar at 0 is a thick line on the axis in the policy's colour.{similarity} Overlapping "
        "whiskers do not settle a difference: the paired table does."
    )
    path = save(pass_rate_figure(results), out / f"pass_rate_{slug}.png")
    return Plot(path, f"Pass rate per policy on {target.name}", caption[0].upper() + caption[1:])


def _comparisons(results: EvaluationResults) -> Table:
    header = ["candidate", "baseline", "domain", "tasks", "wins/losses/ties", "pass rate diff", "p (sign test)",
              "reward diff [CI]", "p (permutation)"]  # fmt: skip
    return Table(
        header,
        [[c.candidate, c.baseline, c.domain, str(c.tasks), f"{c.wins}/{c.losses}/{c.ties}",
          f"{100 * c.pass_rate_difference:+.1f} pts", f"{c.p_value:.3g}",
          estimate_text(c.reward_difference, percent=False), f"{c.reward_p_value:.3g}"] for c in results.comparisons],
        caption="Each policy against the first one, task by task (wins: tasks where the candidate's pass rate is "
        "higher); the sign test and the permutation test ask whether the difference could be chance.",
    )  # fmt: skip


def evaluation_section(evaluation: Results, inputs: ReportInputs, out: Path, slug: str) -> Section:
    """The section of one ``results.json``; ``slug`` names its plot files."""
    results, target = evaluation.results, evaluation.results.target
    section = Section(f"evaluation-{slug}", f"Evaluation on {target.name}")
    section.paragraphs.append(
        f"{len(results.policies)} policies on {tasks_text(target)}, from `{target.source}`, {results.trials} "
        f"trial(s) per task (`{inputs.relative(evaluation.path)}`). Intervals: "
        f"{100 * results.bootstrap.confidence:.0f}% percentile bootstrap over tasks, "
        f"{results.bootstrap.resamples} resamples, seed {results.bootstrap.seed}."
    )
    if target.limit is not None and target.available is not None and target.tasks < target.available:
        ids = list(dict.fromkeys(o.task_id for p in results.policies[:1] for o in p.outcomes))
        named = f" ({', '.join(f'`{i}`' for i in ids)})" if 0 < len(ids) <= 12 else ""
        section.paragraphs.append(
            f"Only these {target.tasks} tasks were evaluated{named}: a pass rate here is not comparable with one "
            f"over all {target.available} (such as the rollout's in the analysis section) unless the tasks are alike."
        )
    if not results.policies:
        section.paragraphs.append("The results hold no policy yet.")
        return section
    section.tables.append(_scores_table(results))
    section.plots.append(_pass_rate_plot(results, out, slug))
    rows, base = gains(results, inputs), base_policy(results)
    if rows and base is not None:
        section.plots.append(
            Plot(
                save(gains_figure(rows, base.name), out / f"capability_gains_{slug}.png"),
                f"Per-capability gains on {target.name}",
                f"How many points of overall pass rate each single capability adapter adds to `{base.name}` on "
                f"{target.name} (green: a gain, red: a loss; labelled with the value). The routed policy should at "
                "least match the best of them.",
            )
        )
    elif base is None and any(p.kind == "adapter" for p in results.policies):
        section.paragraphs.append("No base policy (kind `base`) was evaluated, so no adapter's gain can be shown.")
    if results.comparisons:
        section.tables.append(_comparisons(results))
    for routed in (p for p in results.policies if p.kind == "routed"):
        section.tables += route_table(results, routed, inputs)
    return section
