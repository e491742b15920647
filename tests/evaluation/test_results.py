"""results.json: the models round-trip, and a missing or malformed file is one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trace_envs.evaluation import (
    DomainSummary,
    Estimate,
    EvaluationResults,
    Interval,
    PolicyEvaluation,
    PolicySummary,
    StoreRef,
    TargetInfo,
    TrialOutcome,
    load_results,
    save_results,
)


def small_results() -> EvaluationResults:
    summary = DomainSummary(
        domain="retail",
        tasks=1,
        trials_per_task=2,
        pass_rate=Estimate(value=0.5, interval=Interval(low=0.0, high=1.0, level=0.95)),
        mean_reward=Estimate(value=0.5),
        pass_hat_k={1: 0.5, 2: 0.0},
    )
    outcomes = [
        TrialOutcome(
            task_id="7",
            domain="retail",
            trial=t,
            reward=float(t == 0),
            passed=t == 0,
            store=StoreRef(
                path="episodes/oracle.jsonl", env_id="trace/tau2-retail-v0", seed=3, sample=t, policy="oracle"
            ),
        )
        for t in range(2)
    ]
    policy = PolicyEvaluation(
        name="oracle",
        spec="oracle",
        kind="scripted",
        outcomes=outcomes,
        summary=PolicySummary(
            domains={"retail": summary}, overall=summary.model_copy(update={"domain": "overall"}), episodes=2
        ),
    )
    target = TargetInfo(name="tau2-retail", domains=["retail"], source="data/tau2", tasks=1)
    return EvaluationResults(target=target, trials=2, policies=[policy])


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    results = small_results()
    path = save_results(tmp_path / "out", results)
    assert path == tmp_path / "out" / "results.json"
    loaded = load_results(tmp_path / "out")
    assert loaded == results
    assert loaded.policy("oracle").summary.overall.pass_hat_k == {1: 0.5, 2: 0.0}
    assert load_results(path) == results  # the file itself works too
    with pytest.raises(KeyError, match="policies: oracle"):
        loaded.policy("base")


def test_missing_and_malformed_files_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="trace-envs evaluate"):
        load_results(tmp_path)
    data = json.loads(small_results().model_dump_json())
    data["trials"] = 0
    (tmp_path / "results.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"results.json: not a trace-envs evaluation results file \(trials:"):
        load_results(tmp_path)
