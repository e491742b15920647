"""tau2's evaluator: gold trajectories score 1, perturbed ones less; component rules of reference section 7."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from trace_envs.targets.tau2 import Tau2DomainData, Tau2Evaluator, gold_trajectory, load_domain_data
from trace_envs.targets.tau2.env import tau2_domain
from trace_envs.targets.tau2.evaluator import communicate_checks

from .fake_models import KeywordJudge


@pytest.fixture(scope="module")
def retail(shared_data: Path) -> Tau2DomainData:
    return load_domain_data(shared_data / "tau2", "retail")


@pytest.fixture(scope="module")
def evaluator(retail: Tau2DomainData) -> Tau2Evaluator:
    domain = tau2_domain("retail")
    return Tau2Evaluator(domain, domain.load_file(retail.db_path))


def gold(evaluator: Tau2Evaluator, task: Any) -> list[dict[str, Any]]:
    _, outputs = evaluator.replay_gold(task)
    return gold_trajectory(task, outputs)


def write_indices(messages: list[dict[str, Any]], evaluator: Tau2Evaluator) -> list[int]:
    return [
        i for i, m in enumerate(messages)
        if m.get("tool_calls") and evaluator.toolset.mutates(m["tool_calls"][0]["name"])
    ]  # fmt: skip


def test_every_gold_trajectory_scores_one(retail: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    for task in retail.tasks:
        result = evaluator.evaluate(task, gold(evaluator, task))
        assert result.reward == 1.0, (task.id, result.components, result.notes)
        assert result.reward_basis == ["DB", "COMMUNICATE"]
        assert set(result.components) == {"DB", "COMMUNICATE"}
        assert result.diagnostics["ACTION"] == 1.0
        assert not result.notes
    assert evaluator.db.touched_count == 0


def test_missing_write_scores_zero(retail: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    checked = 0
    for task in retail.tasks[:30]:
        messages = gold(evaluator, task)
        writes = write_indices(messages, evaluator)
        if not writes:
            continue
        last = writes[-1]
        result = evaluator.evaluate(task, messages[:last] + messages[last + 2 :])
        assert result.components["DB"] == 0.0 and result.reward == 0.0, task.id
        assert result.diagnostics["ACTION"] == 0.0
        checked += 1
    assert checked >= 10


def test_wrong_argument_scores_zero(retail: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    task = retail.task("0")
    messages = copy.deepcopy(gold(evaluator, task))
    index = write_indices(messages, evaluator)[-1]
    call = messages[index]["tool_calls"][0]
    call["arguments"]["new_item_ids"] = list(reversed(call["arguments"]["new_item_ids"]))
    result = evaluator.evaluate(task, messages)
    assert result.db_match is False and result.reward == 0.0
    assert result.notes  # the replayed write no longer matches the recorded output


def test_missing_communicated_fact_scores_zero(retail: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    task = next(t for t in retail.tasks if t.evaluation_criteria and t.evaluation_criteria.communicate_info)
    messages = [
        m
        for m in gold(evaluator, task)
        if not (m["role"] == "assistant" and str(m.get("content", "")).startswith("To confirm"))
    ]
    result = evaluator.evaluate(task, messages)
    assert result.components == {"DB": 1.0, "COMMUNICATE": 0.0} and result.reward == 0.0


def test_communicate_rules() -> None:
    said = [{"role": "assistant", "content": "The total is 1,481.50 dollars", "tool_calls": [{"id": "x", "name": "n"}]}]
    checks = communicate_checks(["1481.5", "1481.50", "1,481.50", "dollars"], said)
    assert [c.met for c in checks] == [True, True, False, True]
    user_said = [{"role": "user", "content": "1481.5"}, {"role": "tool", "id": "x", "content": "1481.5"}]
    assert not communicate_checks(["1481.5"], user_said)[0].met


def test_premature_termination_scores_zero(retail: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    task = retail.task("1")
    result = evaluator.evaluate(task, gold(evaluator, task), termination="max_steps")
    assert result.reward == 0.0 and "max_steps" in result.notes[-1]


def test_task_basis_with_nl_judge(retail: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    task = next(t for t in retail.tasks if t.evaluation_criteria and t.evaluation_criteria.nl_assertions)
    messages = gold(evaluator, task)
    with pytest.raises(ValueError, match="no judge model"):
        evaluator.evaluate(task, messages, reward_basis=None)
    judged = Tau2Evaluator(evaluator.domain, evaluator.db, judge=KeywordJudge("To confirm"))
    messages.append({"role": "assistant", "content": "To confirm, all done."})
    result = judged.evaluate(task, messages, reward_basis=None)
    assert result.reward_basis == ["DB", "NL_ASSERTION"] and result.reward == 1.0
    assert len(result.nl_checks) == len(task.evaluation_criteria.nl_assertions or [])  # type: ignore[union-attr]
    unjudged = Tau2Evaluator(evaluator.domain, evaluator.db, judge=KeywordJudge("never said"))
    assert unjudged.evaluate(task, messages, reward_basis=None).components["NL_ASSERTION"] == 0.0


@pytest.mark.skipif(importlib.util.find_spec("trace_envs.domains.airline") is None, reason="airline domain not present")
def test_airline_gold_trajectories_score_one(shared_data: Path) -> None:
    data = load_domain_data(shared_data / "tau2", "airline")
    domain = tau2_domain("airline")
    airline = Tau2Evaluator(domain, domain.load_file(data.db_path))
    for task in data.tasks:
        _, outputs = airline.replay_gold(task)
        result = airline.evaluate(task, gold_trajectory(task, outputs))
        assert result.reward == 1.0, (task.id, result.components, result.notes)
