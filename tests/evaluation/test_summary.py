"""Summaries, paired comparisons and route-only evaluation from hand-made outcomes."""

from __future__ import annotations

import pytest

from trace_envs.evaluation import BASE_ROUTE, BootstrapSettings, PolicyEvaluation, StoreRef, TrialOutcome
from trace_envs.evaluation.summary import compare, policy_summary, route_evaluation

SETTINGS = BootstrapSettings(resamples=200, seed=0)


def evaluation(name: str, passes: dict[str, list[bool]], route: dict[str, str] | None = None) -> PolicyEvaluation:
    outcomes = [
        TrialOutcome(
            task_id=task,
            domain="airline" if task.startswith("a") else "retail",
            trial=trial,
            reward=float(ok),
            passed=ok,
            route=(route or {}).get(task),
            store=StoreRef(path=f"episodes/{name}.jsonl", env_id="e", seed=index, sample=trial, policy=name),
        )
        for index, (task, trials) in enumerate(passes.items())
        for trial, ok in enumerate(trials)
    ]
    return PolicyEvaluation(
        name=name, spec=name, kind="scripted", outcomes=outcomes, summary=policy_summary(outcomes, SETTINGS)
    )


def test_overall_is_solved_over_the_union_of_domains() -> None:
    # airline 1 of 2 tasks, retail 3 of 3: overall (1 + 3) / 5, not the mean of 50% and 100%
    policy = evaluation("p", {"a1": [True], "a2": [False], "r1": [True], "r2": [True], "r3": [True]})
    assert policy.summary.domains["airline"].pass_rate.value == 0.5
    assert policy.summary.overall.pass_rate.value == pytest.approx(4 / 5)


def test_paired_comparison_by_hand() -> None:
    tasks = [f"r{i}" for i in range(10)]
    base = evaluation("base", {t: [i < 2] for i, t in enumerate(tasks)})  # passes r0, r1
    cand = evaluation("cand", {t: [i != 0] for i, t in enumerate(tasks)})  # passes all but r0
    paired = compare(base, cand, "retail", SETTINGS)
    assert (paired.wins, paired.losses, paired.ties) == (8, 1, 1)
    assert paired.pass_rate_difference == pytest.approx(0.7)
    assert paired.p_value == pytest.approx(2 * (1 + 9) / 2**9)  # exact sign test, 8 vs 1
    # reward differences: eight +1, one -1, one 0 (sum 7). A sign flip pattern reaches |sum| >= 7 when the nine
    # non-zero signs sum to +-7 or +-9: 2 * (C(9,1) + C(9,0)) = 20 of 2^9 patterns
    assert paired.reward_p_value == pytest.approx(20 / 512)


def test_route_accuracy_and_union_ceiling_by_hand() -> None:
    # 4 tasks; adapter A solves t1, t2; adapter B solves t2, t3; the base solves t1; nobody solves t4
    a = evaluation("A", {"r1": [True], "r2": [True], "r3": [False], "r4": [False]})
    b = evaluation("B", {"r1": [False], "r2": [True], "r3": [True], "r4": [False]})
    base = evaluation("base", {"r1": [True], "r2": [False], "r3": [False], "r4": [False]})
    routes = {"r1": BASE_ROUTE, "r2": "b_cap", "r3": "a_cap", "r4": "a_cap"}
    routed = evaluation("routed", {"r1": [True], "r2": [True], "r3": [False], "r4": [False]}, routes)
    result = route_evaluation(routed, {"a_cap": a, "b_cap": b, BASE_ROUTE: base}, SETTINGS)
    assert [(t.task_id, t.chosen, t.solvers, t.correct) for t in result.tasks] == [
        ("r1", BASE_ROUTE, ["a_cap", BASE_ROUTE], True),
        ("r2", "b_cap", ["a_cap", "b_cap"], True),
        ("r3", "a_cap", ["b_cap"], False),
        ("r4", "a_cap", [], False),
    ]
    assert result.solvable == 3
    assert result.accuracy is not None and result.accuracy.value == pytest.approx(2 / 3)
    assert result.union_ceiling.value == pytest.approx(3 / 4) and result.routed_pass_rate == 0.5
