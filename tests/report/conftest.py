"""A run folder as the pipeline leaves it: evaluation results (base, two single adapters, the routed policy,
a GRPO baseline), baseline records, an analysis, a synthesis manifest and two trained adapters' metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.analysis.models import AnalysisConfig, AnalysisResult, CapabilityDictionary, CapabilitySummary
from trace_envs.baselines import BaselineRun, save_baseline_run
from trace_envs.evaluation import (
    DomainSummary,
    Estimate,
    EvaluationResults,
    Interval,
    PairedComparison,
    PolicyEvaluation,
    PolicySummary,
    RouteEvaluation,
    TargetInfo,
    save_results,
)
from trace_envs.synthesis.manifest import GateSummary, Manifest, ModuleEntry, Rejection
from trace_envs.training.config import TrainConfig
from trace_envs.training.metadata import AdapterMetadata, save_metadata

CAPABILITIES = ("structured_data_reasoning", "precondition_verification")
PASS_RATES = {
    "base": 0.30,
    "structured_data_reasoning": 0.40,
    "precondition_verification": 0.25,
    "trace": 0.50,
    "grpo": 0.35,
}


def estimate(value: float, half: float = 0.1) -> Estimate:
    return Estimate(value=value, interval=Interval(low=max(0.0, value - half), high=min(1.0, value + half), level=0.95))


def summary(value: float, domain: str = "overall", tasks: int = 20) -> DomainSummary:
    return DomainSummary(
        domain=domain, tasks=tasks, trials_per_task=1, pass_rate=estimate(value), mean_reward=estimate(value),
        pass_hat_k={1: value},
    )  # fmt: skip


def policy(name: str, kind: str, adapters: list[str], spec: str) -> PolicyEvaluation:
    rate = PASS_RATES[name]
    domains = {"airline": summary(rate - 0.05, "airline", 10), "retail": summary(rate + 0.05, "retail", 10)}
    return PolicyEvaluation(
        name=name, spec=spec, kind=kind, base_model="tiny", adapters=adapters,  # type: ignore[arg-type]
        outcomes=[], summary=PolicySummary(domains=domains, overall=summary(rate), episodes=20),
    )  # fmt: skip


def adapter_metadata(capability: str, steps: int, slope: float) -> AdapterMetadata:
    config = TrainConfig(
        env_ids=[f"trace/{capability}-v0"], max_steps=4, num_generations=4, per_device_train_batch_size=8
    )
    curve = [{"step": s, "reward": 0.2 + slope * s, "reward_std": 0.1, "loss": slope / s} for s in range(1, steps + 1)]
    return AdapterMetadata(
        capability=capability, description=f"{capability} in words", env_ids=config.env_ids, base_model="tiny",
        config=config.model_dump(mode="json"), status="complete", steps_done=steps, curve=curve,
        identical_reward_groups=1, total_groups=2 * steps,
    )  # fmt: skip


def analysis() -> AnalysisResult:
    dictionary = CapabilityDictionary.model_validate(
        {"capabilities": [{"name": n, "description": "d"} for n in (*CAPABILITIES, "tool_calling_precision")]}
    )
    rows = [
        CapabilitySummary(capability="structured_data_reasoning", runs=3, selected=3, selection_frequency=1.0,
                          coverage_median=0.6, coverage_q1=0.5, coverage_q3=0.7, gap_median=0.4, kept=True),
        CapabilitySummary(capability="precondition_verification", runs=3, selected=2, selection_frequency=2 / 3,
                          coverage_median=0.3, coverage_q1=0.2, coverage_q3=0.35, gap_median=0.25, kept=True),
        CapabilitySummary(capability="tool_calling_precision", runs=3, selected=0, selection_frequency=0.0,
                          coverage_median=0.05, coverage_q1=0.0, coverage_q3=0.1, gap_median=0.01, kept=False),
    ]  # fmt: skip
    return AnalysisResult(
        config=AnalysisConfig(analyst="probes", runs=3), store="rollout/base.jsonl", episodes=40, successes=12,
        failures=28, dictionary=dictionary, summary=rows, kept=list(CAPABILITIES),
    )  # fmt: skip


def manifest() -> Manifest:
    gates = ["parse", "static_policy", "contract", "properties", "capability", "leakage", "calibration"]

    def entry(capability: str, calibration: str) -> ModuleEntry:
        statuses = ["passed"] * (len(gates) - 1) + [calibration]
        return ModuleEntry(
            module=f"{capability}.py", env_id=f"trace/{capability}-v0", capability=capability, target="tau2",
            generator="catalogue", attempts=1, source_sha256="0" * 64,
            gates=[GateSummary(gate=g, status=s, seconds=0.1) for g, s in zip(gates, statuses, strict=True)],
        )  # fmt: skip

    rejected = Rejection(
        capability="tool_calling_precision", target="tau2", generator="catalogue", attempts=3,
        stopped_by="capability", reason="the flawed solution passes the verifier",
    )  # fmt: skip
    return Manifest(
        modules={f"{c}.py": entry(c, s) for c, s in zip(CAPABILITIES, ("passed", "skipped"), strict=True)},
        rejected={"tool_calling_precision": rejected},
    )


def make_run(root: Path) -> Path:
    """Write the whole run folder under ``root`` and return it."""
    (root / "analysis").mkdir(parents=True)
    (root / "analysis" / "analysis.json").write_text(analysis().model_dump_json(indent=2), encoding="utf-8")
    (root / "envs").mkdir()
    (root / "envs" / "manifest.json").write_text(manifest().model_dump_json(indent=2), encoding="utf-8")
    adapters = []
    for capability, steps, slope in zip(CAPABILITIES, (4, 3), (0.1, 0.05), strict=True):
        folder = root / "adapters" / capability
        save_metadata(folder, adapter_metadata(capability, steps, slope))
        adapters.append(str(folder))
    grpo = root / "baselines" / "grpo"
    save_baseline_run(grpo, BaselineRun(method="grpo", env_ids=["trace/tau2-v0"], base_model="tiny", budget=56,
                                        rollouts_used=56, artifact="adapter"))  # fmt: skip
    policies = [
        policy("base", "base", [], "hf:tiny"),
        policy("structured_data_reasoning", "adapter", [adapters[0]], f"hf:tiny@{adapters[0]}"),
        policy("precondition_verification", "adapter", [adapters[1]], f"hf:tiny@{adapters[1]}"),
        policy("trace", "routed", adapters, "routed"),
        policy("grpo", "adapter", [str(grpo / "adapter")], f"hf:tiny@{grpo / 'adapter'}"),
    ]
    comparison = PairedComparison(
        baseline="base", candidate="trace", domain="overall", tasks=20, wins=5, losses=1, ties=14,
        pass_rate_difference=0.2, p_value=0.21875, reward_difference=estimate(0.2), reward_p_value=0.2,
    )  # fmt: skip
    route = RouteEvaluation(
        routed="trace", candidates={"structured_data_reasoning": "structured_data_reasoning", "__base__": "base"},
        tasks=[], solvable=12, accuracy=estimate(0.75), union_ceiling=estimate(0.6), routed_pass_rate=0.5,
    )  # fmt: skip
    target = TargetInfo(name="tau2", domains=["airline", "retail"], source="builtin", tasks=20)
    results = EvaluationResults(target=target, trials=1, policies=policies, comparisons=[comparison], routing=[route])
    save_results(root / "evaluation", results)
    return root


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")
