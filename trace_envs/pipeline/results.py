"""What each pipeline stage returns: one pydantic model per stage, cached in the stage's marker and parsed back by
its type, so that a later stage, the console and the report read fields, not string paths into a dict.

The library's own records are kept whole where a stage has them: a synthesised capability is a
:class:`~trace_envs.synthesis.SynthesisResult`, a trained adapter carries its
:class:`~trace_envs.training.metadata.AdapterMetadata`, and an evaluation its
:class:`~trace_envs.evaluation.results.TargetInfo` and each policy's
:class:`~trace_envs.evaluation.results.PolicySummary` (the trial outcomes stay in its ``results.json``, whose path
it records).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.evaluation.results import PolicySummary, TargetInfo
from trace_envs.synthesis.generation.loop import SynthesisResult
from trace_envs.training.metadata import AdapterMetadata

if TYPE_CHECKING:
    from trace_envs.evaluation.results import EvaluationResults
    from trace_envs.synthesis.manifest import ModuleEntry


class StageResult(BaseModel):
    """Base of every stage's result: unknown fields are refused, so a cached result of another shape is not read
    as this one (the runner runs such a stage again)."""

    model_config = ConfigDict(extra="forbid")


class RolloutTarget(StageResult):
    """One target's rollout: episodes of its store, how many passed, and how many an earlier run had finished."""

    episodes: int
    successes: int
    pass_rate: float
    skipped: int = Field(default=0, description="Episodes a killed run had finished (bookkeeping, not output).")


class RolloutResult(StageResult):
    """The rollout stage: the base agent's policy spec and each target's episodes (``rollout/<target>.jsonl``)."""

    policy: str
    targets: dict[str, RolloutTarget] = Field(default_factory=dict)


class AnalyzeTarget(StageResult):
    """One target's analysis (``analyze/<target>/analysis.json``): the kept capabilities and what it cost."""

    kept: list[str] = Field(default_factory=list)
    failures: int = 0
    cost_usd: float = 0.0


class AnalyzeResult(StageResult):
    """The analyze stage: the analyst model and each target's analysis."""

    analyst: str
    targets: dict[str, AnalyzeTarget] = Field(default_factory=dict)


class SynthesizeResult(StageResult):
    """The synthesize stage: per target, what became of each kept capability (``synthesize/<target>/``), in the
    analysis's order. A result is the synthesis's own record without its gate report (that stays in the folder),
    so a resumed run's result equals an uninterrupted one's."""

    generator: str
    targets: dict[str, dict[str, SynthesisResult]] = Field(default_factory=dict)

    def passed(self, target: str) -> dict[str, str]:
        """Capability -> env id of every capability of ``target`` whose module passed the gates."""
        found = self.targets.get(target, {})
        return {name: result.env_id for name, result in found.items() if result.status == "passed" and result.env_id}


def passed_result(entry: ModuleEntry, reason: str = "") -> SynthesisResult:
    """The :class:`SynthesisResult` of a module its folder's manifest vouches for (as the manifest records it)."""
    return SynthesisResult(
        capability=entry.capability, target=entry.target, generator=entry.generator, status="passed",
        module=entry.module, env_id=entry.env_id, attempts=entry.attempts, reason=reason,
        prompt_sha256=entry.prompt_sha256, cost_usd=entry.cost_usd, usage=entry.usage, notes=list(entry.notes),
    )  # fmt: skip


class TrainedAdapter(StageResult):
    """One trained adapter: its folder (relative to the run folder), whether an earlier run had finished it, and
    its ``trace_adapter.json``."""

    path: str
    reused: bool = Field(default=False, description="An earlier run had finished it (bookkeeping, not output).")
    metadata: AdapterMetadata

    @property
    def steps(self) -> int:
        """GRPO steps it was trained for."""
        return self.metadata.steps_done


class TrainResult(StageResult):
    """The train stage: the base model (relative to the run folder when built inside it), each adapter by
    ``<target>/<capability>``, and the envs a spot check stopped (no adapter) with the reason."""

    model: str
    adapters: dict[str, TrainedAdapter] = Field(default_factory=dict)
    stopped: dict[str, str] = Field(default_factory=dict)


class RouteTarget(StageResult):
    """One target's routing (``route/<target>.routes.json``): its adapters, and rollout tasks per route."""

    adapters: int = 0
    routes: dict[str, int] = Field(default_factory=dict, description="Capability (or 'base') -> tasks routed there.")


class RouteResult(StageResult):
    """The route stage: each target's routing (none when routing is off)."""

    targets: dict[str, RouteTarget] = Field(default_factory=dict)


class EvaluateTarget(StageResult):
    """One target's evaluation: its ``results.json`` (relative to the run folder), which tasks it ran on, and
    each policy's summary."""

    results: str
    target: TargetInfo
    policies: dict[str, PolicySummary] = Field(default_factory=dict)

    def pass_rates(self) -> dict[str, float]:
        """Policy -> overall pass rate."""
        return {name: summary.overall.pass_rate.value for name, summary in self.policies.items()}

    def load(self, root: Path) -> EvaluationResults:
        """The whole evaluation (every trial), read from its ``results.json`` under the run folder ``root``."""
        from trace_envs.evaluation.results import load_results

        return load_results(root / self.results)


class EvaluateResult(StageResult):
    """The evaluate stage: each target's evaluation."""

    targets: dict[str, EvaluateTarget] = Field(default_factory=dict)


class ReportResult(StageResult):
    """The report stage: the files it wrote into ``report/`` and the sections that had nothing to show."""

    markdown: str
    html: str
    plots: int = 0
    missing: list[str] = Field(default_factory=list)


STAGE_RESULTS: tuple[type[StageResult], ...] = (
    RolloutResult, AnalyzeResult, SynthesizeResult, TrainResult, RouteResult, EvaluateResult, ReportResult,
)  # fmt: skip
"""Every stage's result type, in stage order."""
