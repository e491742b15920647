"""The routing of each target: for a routed policy, every candidate it could route to (its adapters and the
base model), where the router sent the evaluation's tasks and the rollout tasks (``<target>.routes.json``),
which tasks each candidate is known to solve, and from that the router's accuracy and the union ceiling."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trace_envs.evaluation import stats
from trace_envs.evaluation.results import BASE_ROUTE, EvaluationResults, PolicyEvaluation
from trace_envs.evaluation.summary import task_scores

from .inputs import ReportInputs, Routes, same_folder
from .sections import Section, Table, pct

ROUTING_CAPTION = (
    "Route-only evaluation of `{routed}`: one row per candidate the router could pick for a task (each of its "
    "adapters, or the base model alone). A candidate solves a task when it passed every trial of it; that is "
    "known from its own evaluation when it was evaluated alone, otherwise only from the tasks `{routed}` passed "
    "through it (a lower bound). Solvable tasks are those some candidate is known to solve; the router's accuracy "
    "is the share of them it sent to a solver, and the union ceiling the share of all tasks some candidate "
    "solves (a perfect router's pass rate). The last column is where the router sent the rollout tasks "
    "(routes.json, before evaluation)."
)


@dataclass
class Candidate:
    """One choice of a routed policy: its route key, adapter folder and the policy evaluating it alone."""

    route: str
    adapter: str | None
    alone: PolicyEvaluation | None
    solved: set[tuple[str, str]] = field(default_factory=set)


def _candidates(results: EvaluationResults, routed: PolicyEvaluation, inputs: ReportInputs) -> list[Candidate]:
    """The routed policy's adapters (named by their capability), then the base model."""
    named = next((r.candidates for r in results.routing if r.routed == routed.name), {})
    by_name = {p.name: p for p in results.policies}
    found = []
    for folder in routed.adapters:
        adapter = next((a for a in inputs.adapters if same_folder(folder, a.path)), None)
        route = adapter.metadata.capability if adapter is not None else Path(folder).name
        alone = by_name.get(named.get(route, "")) or next(
            (p for p in results.policies if p.kind == "adapter" and p.adapters and same_folder(p.adapters[0], Path(folder))),
            None,
        )  # fmt: skip
        found.append(Candidate(route, folder, alone))
    base = by_name.get(named.get(BASE_ROUTE, "")) or next((p for p in results.policies if p.kind == "base"), None)
    found.append(Candidate(BASE_ROUTE, None, base))
    return found


def _rollout_share(routes: Routes | None, route: str) -> str:
    if routes is None or not routes.routed:
        return "n/a (no routes.json)"
    count = sum((r.capability or BASE_ROUTE) == route for r in routes.routed)
    return f"{count}/{len(routes.routed)} ({pct(count / len(routes.routed))})"


def route_table(results: EvaluationResults, routed: PolicyEvaluation, inputs: ReportInputs) -> list[Table]:
    """The candidates' table and the summary row (solvable tasks, accuracy, union ceiling) of ``routed``."""
    candidates = _candidates(results, routed, inputs)
    scores = task_scores(routed.outcomes)
    for candidate in candidates:
        if candidate.alone is not None:
            candidate.solved |= {(s.domain, s.task_id) for s in task_scores(candidate.alone.outcomes)
                                 if s.trials and s.successes == s.trials}  # fmt: skip
        candidate.solved |= {(s.domain, s.task_id) for s in scores
                             if (s.route or BASE_ROUTE) == candidate.route and s.trials and s.successes == s.trials}  # fmt: skip
    routes = inputs.routes_of(results.target.name)
    table = Table(
        ["candidate", "adapter", "evaluated alone as", "evaluation tasks routed to it (passed)",
         "tasks it is known to solve", "rollout tasks routed to it (routes.json)"], [],
        caption=ROUTING_CAPTION.format(routed=routed.name),
    )  # fmt: skip
    for c in candidates:
        sent = [s for s in scores if (s.route or BASE_ROUTE) == c.route]
        passed = sum(s.trials > 0 and s.successes == s.trials for s in sent)
        table.rows.append(
            [f"`{c.route}`" + (" (the base model alone)" if c.route == BASE_ROUTE else ""),
             f"`{inputs.relative(Path(c.adapter))}`" if c.adapter else "none",
             c.alone.name if c.alone is not None else "not evaluated alone",
             f"{len(sent)}/{len(scores)} ({passed} passed)", str(len(c.solved)), _rollout_share(routes, c.route)]
        )  # fmt: skip
    return [table, _summary(results, routed, candidates)]


def _summary(results: EvaluationResults, routed: PolicyEvaluation, candidates: list[Candidate]) -> Table:
    settings = results.bootstrap
    scores = task_scores(routed.outcomes)
    solvers = [[c.route for c in candidates if (s.domain, s.task_id) in c.solved] for s in scores]
    solvable = [(s, found) for s, found in zip(scores, solvers, strict=True) if found]

    def estimate(values: list[float]) -> str:
        value = stats.estimate(values, resamples=settings.resamples, level=settings.confidence, seed=settings.seed)
        interval = f" [{pct(value.interval.low)}, {pct(value.interval.high)}]" if value.interval else ""
        return pct(value.value) + interval

    accuracy = (
        estimate([float((s.route or BASE_ROUTE) in found) for s, found in solvable])
        if solvable
        else "n/a (no candidate is known to solve any task)"
    )
    ceiling = estimate([float(bool(found)) for found in solvers]) if scores else "n/a"
    rate = pct(stats.mean([s.pass_rate for s in scores])) if scores else "n/a"
    return Table(
        ["routed policy", "candidates", "tasks", "solvable tasks", "router accuracy [CI]", "union ceiling [CI]",
         "routed pass rate"],
        [[routed.name, str(len(candidates)), str(len(scores)), str(len(solvable)), accuracy, ceiling, rate]],
    )  # fmt: skip


def routes_table(routes: Routes, inputs: ReportInputs) -> Table:
    """Where the router sent a target's rollout tasks (a routes file without an evaluation to join)."""
    counts: dict[str, int] = {}
    for r in routes.routed:
        counts[r.capability or BASE_ROUTE] = counts.get(r.capability or BASE_ROUTE, 0) + 1
    return Table(
        ["target", "routed to", "rollout tasks"],
        [[routes.target, f"`{route}`", f"{n}/{len(routes.routed)} ({pct(n / len(routes.routed))})"]
         for route, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))],
        caption=f"The router's choice for each rollout task of {routes.target} (`{inputs.relative(routes.path)}`); "
        f"`{BASE_ROUTE}` is the base model alone.",
    )  # fmt: skip


def routing_section(inputs: ReportInputs) -> Section:
    """The routes files no evaluation shows (a run routed but not evaluated); empty otherwise."""
    section = Section("routing", "Routing of the rollout tasks")
    evaluated = [e.results.target.name for e in inputs.evaluations]
    for routes in inputs.routes:
        if not any(inputs.routes_of(name) is routes for name in evaluated):
            section.tables.append(routes_table(routes, inputs))
    return section
