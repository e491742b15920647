"""A run folder as the pipeline leaves it for three targets (device, retail, airline): an analysis, a synthesis
manifest, adapters (two share a capability), a routes file and an evaluation per target, where the tiny model
and the routed policy score 0 everywhere and every training curve is flat at 0."""

from __future__ import annotations

import json
from pathlib import Path

from trace_envs.evaluation import BootstrapSettings, EvaluationResults, PolicyEvaluation, TargetInfo, save_results
from trace_envs.evaluation.results import BASE_ROUTE, StoreRef, TrialOutcome
from trace_envs.evaluation.summary import comparisons, policy_summary, route_evaluation
from trace_envs.synthesis.manifest import GateSummary, Manifest, ModuleEntry
from trace_envs.training.metadata import save_metadata

from .conftest import adapter_metadata, analysis

TARGETS = {
    "device": ["datetime_reasoning", "permission_error_recovery"],
    "retail": ["multi_step_task_completion"],
    "airline": ["multi_step_task_completion"],
}
EVALUATED = {"device": "device", "retail": "tau2-retail", "airline": "tau2-airline"}
AVAILABLE = {"device": 48, "retail": 9, "airline": 9}
TASKS = 9
SETTINGS = BootstrapSettings(resamples=200)


def outcomes(target: str, spec: str, passed: set[int], route: str | None = None) -> list[TrialOutcome]:
    device = target == "device"
    return [
        TrialOutcome(
            task_id=f"task-{i}", domain=target, trial=0, reward=float(i in passed), passed=i in passed,
            similarity=float(i in passed) if device else None, route=route,
            store=StoreRef(path="episodes/x.jsonl", env_id=f"trace/{target}-v0", seed=i, sample=0, policy=spec),
        )
        for i in range(TASKS)
    ]  # fmt: skip


def evaluated(name: str, spec: str, kind: str, cases: list[TrialOutcome], adapters: list[str]) -> PolicyEvaluation:
    return PolicyEvaluation(
        name=name, spec=spec, kind=kind, base_model="train/base-model" if kind != "scripted" else None,  # type: ignore[arg-type]
        adapters=adapters, outcomes=cases, summary=policy_summary(cases, SETTINGS),
    )  # fmt: skip


def results(target: str, adapters: list[str]) -> EvaluationResults:
    """The scripted base agent (all fail on the device's first 9 scenarios, 6 of 9 on tau2), the tiny model
    (0 everywhere) and the routed policy (the device's first two tasks passed through its second adapter)."""
    routed_to = TARGETS[target][-1] if target == "device" else BASE_ROUTE
    passed_routed = {0, 1} if target == "device" else set()
    base = evaluated("base", "flawed:multi_step_task_completion", "scripted",
                     outcomes(target, "flawed", set() if target == "device" else {0, 1, 2, 3, 4, 5}), [])  # fmt: skip
    model = evaluated("model", "hf:train/base-model", "base", outcomes(target, "hf", set()), [])
    spec = f"routed:train/base-model@{','.join(adapters)}"
    routed = evaluated("routed", spec, "routed", outcomes(target, spec, passed_routed, routed_to), adapters)
    policies = [base, model, routed]
    info = TargetInfo(
        name=EVALUATED[target], domains=[target], source="builtin", split="all" if target == "device" else "base",
        tasks=TASKS, available=AVAILABLE[target], limit=TASKS,
    )  # fmt: skip
    return EvaluationResults(
        target=info, trials=1, policies=policies, bootstrap=SETTINGS, comparisons=comparisons(policies, SETTINGS),
        routing=[route_evaluation(routed, {BASE_ROUTE: model}, SETTINGS)],
    )  # fmt: skip


def manifest(target: str) -> Manifest:
    gates = ["format", "parse", "static_policy", "contract", "leakage", "execution", "capability", "properties",
             "calibration"]  # fmt: skip
    entries = {
        f"{c}.py": ModuleEntry(
            module=f"{c}.py", env_id=f"trace/{c}-v0", capability=c, target=target, generator="catalogue",
            attempts=1, source_sha256="0" * 64, gates=[GateSummary(gate=g, status="passed", seconds=0.1) for g in gates],
        )
        for c in TARGETS[target]
    }  # fmt: skip
    return Manifest(modules=entries)


def make_multi_target_run(root: Path) -> Path:
    """Write the run folder under ``root`` (the pipeline's layout) and return it."""
    for target, capabilities in TARGETS.items():
        found = analysis().model_copy(update={"store": f"rollout/{target}.jsonl", "episodes": 48, "successes": 18})
        (root / "analyze" / target).mkdir(parents=True)
        (root / "analyze" / target / "analysis.json").write_text(found.model_dump_json(), encoding="utf-8")
        (root / "synthesize" / target).mkdir(parents=True)
        (root / "synthesize" / target / "manifest.json").write_text(
            manifest(target).model_dump_json(), encoding="utf-8"
        )
        adapters = []
        for capability in capabilities:
            folder = root / "train" / target / capability
            flat = adapter_metadata(capability, 2, 0.0)
            flat.curve = [{"step": s, "reward": 0.0, "reward_std": 0.0, "loss": 0.0} for s in (1, 2)]
            save_metadata(folder, flat)
            adapters.append(str(folder))
        routed = [
            {"task": f"trace/{target}-v0#{i}", "capability": capabilities[-1] if target == "device" else None,
             "label": "B", "adapter": adapters[-1] if target == "device" else None}
            for i in range(AVAILABLE[target])
        ]  # fmt: skip
        (root / "route").mkdir(exist_ok=True)
        (root / "route" / f"{target}.routes.json").write_text(json.dumps(routed), encoding="utf-8")
        save_results(root / "evaluate" / target, results(target, adapters))
    return root
