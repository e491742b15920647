"""The gold-trajectory policy (``oracle``) passes every tau2 task and scores similarity 1.0 on every device
scenario; a flawed policy is paired against it per task."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.evaluation import OVERALL, load_results
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import parse_policy
from trace_envs.evaluation.targets import load_target
from trace_envs.targets.tau2.scripted_user import ScriptedCustomer


def test_gold_policy_passes_every_tau2_task(shared_data: Path, tmp_path: Path) -> None:
    pytest.importorskip("trace_envs.domains.airline")
    pytest.importorskip("trace_envs.domains.retail")
    target = load_target("tau2", shared_data / "tau2")
    results = evaluate(target, [parse_policy("gold=oracle")], tmp_path, user_model=ScriptedCustomer())
    gold = results.policy("gold")
    assert set(gold.summary.domains) == {"airline", "retail"}
    assert {d: s.tasks for d, s in gold.summary.domains.items()} == {"airline": 50, "retail": 114}
    failed = [(o.domain, o.task_id, o.reward, o.error) for o in gold.outcomes if not o.passed]
    assert failed == []
    assert gold.summary.overall.tasks == 164 and gold.summary.overall.pass_rate.value == 1.0
    assert all(s.pass_rate.value == 1.0 for s in gold.summary.domains.values())
    assert results.target.user_model == "scripted:customer"
    assert load_results(tmp_path) == results
    # every trajectory is in the store the outcome names
    store = tmp_path / gold.outcomes[0].store.path
    assert store.is_file() and store.read_bytes().count(b"\n") == 164


def test_gold_policy_scores_similarity_one_on_every_device_scenario(tmp_path: Path) -> None:
    target = load_target("device")
    results = evaluate(target, [parse_policy("gold=oracle"), parse_policy("flawed")], tmp_path, trials=2)
    gold = results.policy("gold").summary.domains["device"]
    assert gold.tasks == len(target.tasks) >= 46
    assert gold.mean_similarity is not None and gold.mean_similarity.value == 1.0
    assert all(o.similarity == 1.0 and o.passed for o in results.policy("gold").outcomes)
    assert gold.perfect_rate is not None and gold.perfect_rate.value == 1.0 and gold.perfect_count == gold.tasks
    assert gold.pass_hat_k == {1: 1.0, 2: 1.0}
    # the flawed policy leaves the task unreported: below 1.0 on every scenario, and it loses every pair
    flawed = results.policy("flawed").summary.domains["device"]
    assert flawed.mean_similarity is not None and flawed.mean_similarity.value < 1.0
    (paired,) = results.comparisons
    assert (paired.baseline, paired.candidate, paired.domain) == ("gold", "flawed", "device")
    assert paired.losses == flawed.tasks - (flawed.perfect_count or 0) and paired.wins == 0
    assert paired.p_value < 1e-6 and paired.reward_difference.value < 0
    assert results.policy("gold").summary.overall.domain == OVERALL
