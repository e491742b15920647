"""The rich tables ``trace-envs evaluate`` prints: per policy and domain, paired comparisons, routing."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _estimate(estimate: Any, percent: bool = True) -> str:
    if estimate is None:
        return "-"
    fmt = "{:.1%}" if percent else "{:.3f}"
    text = fmt.format(estimate.value)
    if estimate.interval is not None:
        text += f" [{fmt.format(estimate.interval.low)}, {fmt.format(estimate.interval.high)}]"
    return text


def failure_lines(results: Any) -> list[str]:
    """One line per policy with episodes that failed to run (an unreachable model, a crashed env): how many of
    its episodes, and the first distinct cause. Such episodes are left out of every metric, so a policy whose
    model never answered would otherwise show an empty row and nothing else."""
    lines = []
    for policy in results.policies:
        errored = [o for o in policy.outcomes if o.error is not None]
        if not errored:
            continue
        causes: dict[str, int] = {}
        for outcome in errored:
            causes[outcome.error] = causes.get(outcome.error, 0) + 1
        first, count = next(iter(causes.items()))
        others = f" (+{len(causes) - 1} other causes)" if len(causes) > 1 else ""
        lines.append(
            f"policy {policy.name!r}: {len(errored)} of {len(policy.outcomes)} episodes failed to run, "
            f"{count} with: {first}{others}; they count in no metric, rerun the same command to replay them"
        )
    return lines


def print_results(console: Any, results: Any, out: Path) -> None:
    """The summary table (one row per policy and domain), the comparisons and the route-only evaluation."""
    from rich.table import Table

    level = f"{results.bootstrap.confidence:.0%}"
    table = Table(
        title=f"{results.target.name}: {results.target.tasks} tasks x {results.trials} trials ({level} intervals)"
    )
    for column in (
        "policy",
        "decoding",
        "domain",
        "tasks",
        "pass rate",
        "pass^k",
        "mean similarity",
        "perfect",
        "errors",
    ):
        table.add_column(column, justify="left" if column in ("policy", "decoding", "domain") else "right")
    for policy in results.policies:
        summary = policy.summary
        rows = [*summary.domains.values(), summary.overall] if len(summary.domains) > 1 else [*summary.domains.values()]
        for row in rows:
            pass_k = " ".join(f"{v:.2f}" for _, v in sorted(row.pass_hat_k.items()))
            perfect = f"{row.perfect_count}/{row.tasks}" if row.perfect_count is not None else "-"
            table.add_row(
                policy.name, policy.decoding, row.domain, str(row.tasks), _estimate(row.pass_rate), pass_k,
                _estimate(row.mean_similarity, percent=False), perfect, str(summary.errors),
            )  # fmt: skip
    console.print(table)
    if results.comparisons:
        paired = Table(title="paired per task: candidate vs baseline (sign test on pass; permutation on reward)")
        for column in ("candidate", "baseline", "domain", "wins", "losses", "ties", "Δ pass", "p", "Δ reward", "p"):
            paired.add_column(column, justify="left" if column in ("candidate", "baseline", "domain") else "right")
        for c in results.comparisons:
            paired.add_row(
                c.candidate, c.baseline, c.domain, str(c.wins), str(c.losses), str(c.ties),
                f"{c.pass_rate_difference:+.1%}", f"{c.p_value:.3g}", _estimate(c.reward_difference, percent=False),
                f"{c.reward_p_value:.3g}",
            )  # fmt: skip
        console.print(paired)
    for route in results.routing:
        console.print(
            f"routing {route.routed}: accuracy {_estimate(route.accuracy)} on {route.solvable} solvable tasks; "
            f"union ceiling {_estimate(route.union_ceiling)}; routed pass rate {route.routed_pass_rate:.1%}"
        )
    console.print(f"wrote {Path(out) / 'results.json'}", soft_wrap=True)
