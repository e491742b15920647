"""The evaluation's results, ``results.json`` (format ``trace-envs/evaluation@1``): per trial outcomes,
per-policy summaries with bootstrap intervals, paired comparisons and route-only evaluation.

Stable: the report and the pipeline read this file. Fields are only ever added, with defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

RESULTS_FORMAT: Final = "trace-envs/evaluation@1"
RESULTS_FILE = "results.json"
OVERALL = "overall"
"""The summary key of the union of a target's domains (the paper's overall pass rate, Appendix C)."""
BASE_ROUTE = "__base__"
"""The route of a task the router sent to the base model (its "none" label); PEFT's name for no adapter."""

PolicyKind = Literal["scripted", "model", "base", "adapter", "merged", "routed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Interval(_Model):
    """A percentile bootstrap interval: ``level`` of the resampled statistics lie in [low, high]."""

    low: float
    high: float
    level: float = Field(gt=0.0, lt=1.0, description="Confidence level, e.g. 0.95.")


class Estimate(_Model):
    """A statistic and its bootstrap interval (``None`` when it has none, e.g. fewer than two tasks)."""

    value: float
    interval: Interval | None = None


class StoreRef(_Model):
    """Where a trial's trajectory is: the store file (relative to the results folder) and its episode key."""

    path: str = Field(description="Trajectory store (JSONL), relative to the folder holding results.json.")
    env_id: str
    seed: int
    sample: int
    policy: str = Field(description="The policy spec the episode was recorded under.")


class TrialOutcome(_Model):
    """One trial of one task under one policy."""

    task_id: str
    domain: str = Field(description="The task's domain (one of its target's domains, e.g. retail).")
    trial: int = Field(ge=0)
    reward: float
    passed: bool = Field(description="The benchmark's binary success (tau2: reward 1; device: similarity 1.0).")
    similarity: float | None = Field(default=None, description="Device only: the milestone similarity.")
    route: str | None = Field(
        default=None, description=f"Routed policies: the chosen capability ({BASE_ROUTE!r}: the base model)."
    )
    num_steps: int = 0
    error: str | None = Field(default=None, description="First line of an episode error (excluded from metrics).")
    store: StoreRef


class TaskScore(_Model):
    """A task's trials under one policy, aggregated."""

    task_id: str
    domain: str
    trials: int
    successes: int
    mean_reward: float
    mean_similarity: float | None = None
    route: str | None = Field(default=None, description="The route of its first trial (routed policies).")

    @property
    def pass_rate(self) -> float:
        return self.successes / self.trials if self.trials else 0.0


class DomainSummary(_Model):
    """Metrics over one domain's tasks (or over the union, ``domain == "overall"``)."""

    domain: str
    tasks: int
    trials_per_task: int = Field(description="The fewest trials any task has (pass^k is reported up to it).")
    pass_rate: Estimate = Field(description="Mean over tasks of the fraction of trials passed (= pass^1).")
    mean_reward: Estimate
    pass_hat_k: dict[int, float] = Field(default_factory=dict, description="tau2's pass^k for k = 1..trials_per_task.")
    mean_similarity: Estimate | None = Field(default=None, description="Device: mean milestone similarity.")
    perfect_rate: Estimate | None = Field(default=None, description="Device: share of trials with similarity 1.0.")
    perfect_count: int | None = Field(default=None, description="Device: tasks whose every trial is perfect.")


class PolicySummary(_Model):
    """A policy's metrics per domain and over the union of domains."""

    domains: dict[str, DomainSummary] = Field(default_factory=dict)
    overall: DomainSummary
    episodes: int = Field(description="Evaluation episodes counted (finished, without error).")
    errors: int = Field(default=0, description="Episodes that ended in an error (left out; rerun on resume).")


class PolicyEvaluation(_Model):
    """One evaluated policy: what it is, its per-trial outcomes and its summary."""

    name: str = Field(description="Label in tables and comparisons (unique within the results).")
    spec: str = Field(description="The policy spec it was evaluated with.")
    kind: PolicyKind
    base_model: str | None = None
    adapters: list[str] = Field(default_factory=list, description="Adapter directories (routed: every candidate).")
    rollouts_spent: int | None = Field(
        default=None, description="Training rollouts the method spent (from baseline.json / the pipeline), if known."
    )
    decoding: str = Field(default="greedy", description="'greedy' or 'sampled (temperature T)'.")
    sampling: dict[str, Any] = Field(default_factory=dict, description="The sampling options its episodes ran with.")
    outcomes: list[TrialOutcome] = Field(default_factory=list)
    summary: PolicySummary


class PairedComparison(_Model):
    """Candidate against baseline on the tasks both were evaluated on.

    ``p_value``: exact two-sided sign test on the per-task pass rates (with one trial per task this is the
    exact McNemar test). ``reward_difference``: mean per-task reward difference with a paired bootstrap
    interval; ``reward_p_value``: two-sided paired sign-flip permutation test on it.
    """

    baseline: str
    candidate: str
    domain: str = Field(description="A domain, or 'overall'.")
    tasks: int
    wins: int = Field(description="Tasks where the candidate's pass rate is higher.")
    losses: int
    ties: int
    pass_rate_difference: float = Field(description="Candidate minus baseline.")
    test: str = "exact sign test"
    p_value: float = Field(ge=0.0, le=1.0)
    reward_difference: Estimate
    reward_p_value: float = Field(ge=0.0, le=1.0)


class RouteTask(_Model):
    """One task in route-only evaluation: the router's choice and the candidates that solve it."""

    task_id: str
    domain: str
    chosen: str = Field(description=f"The routed capability ({BASE_ROUTE!r}: the base model).")
    solvers: list[str] = Field(description="Candidates (capabilities, or the base) whose policy passed the task.")
    correct: bool = Field(description="The choice is among the solvers.")


class RouteEvaluation(_Model):
    """Router accuracy against which adapters solve each task, and the union ceiling."""

    routed: str = Field(description="Name of the routed policy's evaluation.")
    candidates: dict[str, str] = Field(description="Capability (or the base) -> name of its policy's evaluation.")
    tasks: list[RouteTask] = Field(default_factory=list)
    solvable: int = Field(description="Tasks at least one candidate solves.")
    accuracy: Estimate | None = Field(
        default=None, description="Share of solvable tasks routed to a solver (None: no task is solvable)."
    )
    union_ceiling: Estimate = Field(description="Share of all tasks some candidate solves (best adapter per task).")
    routed_pass_rate: float = Field(description="The routed policy's pass rate on the same tasks.")


class BootstrapSettings(_Model):
    """How every interval was computed (seeded, so the same results give the same intervals)."""

    resamples: int = Field(default=2000, ge=1)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    seed: int = 0


class TargetInfo(_Model):
    """What was evaluated on."""

    name: str = Field(description="tau2, tau2-airline, tau2-retail or device.")
    domains: list[str]
    source: str = Field(description="The tau2 data folder, the device scenario file, or 'builtin'.")
    split: str = "base"
    tasks: int = Field(description="Tasks per policy (all domains).")
    available: int | None = Field(
        default=None, description="Tasks the target's split has before ``limit`` (None: not recorded)."
    )
    limit: int | None = Field(default=None, description="Only the first ``limit`` tasks per domain were kept.")
    user_model: str | None = Field(default=None, description="The simulated user's model spec (tau2), if any.")


class EvaluationResults(_Model):
    """Everything one ``trace-envs evaluate`` run produced; written as ``results.json``."""

    format: Literal["trace-envs/evaluation@1"] = RESULTS_FORMAT
    target: TargetInfo
    trials: int = Field(ge=1, description="Trials per task.")
    bootstrap: BootstrapSettings = Field(default_factory=BootstrapSettings)
    policies: list[PolicyEvaluation] = Field(default_factory=list)
    comparisons: list[PairedComparison] = Field(default_factory=list)
    routing: list[RouteEvaluation] = Field(default_factory=list)

    def policy(self, name: str) -> PolicyEvaluation:
        """The evaluation of the policy called ``name``; ``KeyError`` lists the names."""
        for evaluation in self.policies:
            if evaluation.name == name:
                return evaluation
        raise KeyError(f"no policy {name!r} in these results; policies: {', '.join(p.name for p in self.policies)}")


def results_path(path: str | Path) -> Path:
    """``path`` itself if it names a file, else ``path/results.json``."""
    target = Path(path)
    return target if target.suffix == ".json" else target / RESULTS_FILE


def save_results(out: str | Path, results: EvaluationResults) -> Path:
    """Write ``results.json`` into folder ``out`` (or to ``out`` if it ends in .json), atomically."""
    path = results_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(results.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def load_results(path: str | Path) -> EvaluationResults:
    """Read ``results.json`` (a folder or the file); a missing or malformed file names the path and the problem."""
    file = results_path(path)
    if not file.is_file():
        raise FileNotFoundError(f"{file} does not exist: write it with `trace-envs evaluate ... --out {file.parent}`")
    try:
        return EvaluationResults.model_validate_json(file.read_text(encoding="utf-8"))
    except ValidationError as exc:
        from trace_envs.problems import validation_problems

        problems = validation_problems(exc, EvaluationResults)
        raise ValueError(f"{file}: not a trace-envs evaluation results file ({problems})") from None
