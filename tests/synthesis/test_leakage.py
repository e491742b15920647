"""The leakage guard against the real retail and airline task files, and the device test split."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.synthesis import GateContext
from trace_envs.synthesis.gates.leakage import evaluation_index, is_id, leakage_gate
from trace_envs.targets.tau2.data import load_domain_data

from .conftest import GOOD_MODULE


def test_a_module_of_its_own_passes(tau2_data: Path) -> None:
    result = leakage_gate(GOOD_MODULE.read_text(encoding="utf-8"), GateContext(target="retail", data=tau2_data))
    assert result.passed
    assert "114 tasks" in result.details["note"]


@pytest.mark.parametrize("target", ["retail", "airline"])
def test_ids_and_text_of_every_task_are_indexed(tau2_data: Path, target: str) -> None:
    index = evaluation_index(GateContext(target=target, data=tau2_data))
    tasks = load_domain_data(tau2_data, target).tasks
    assert set(index.task_ids) == {task.id for task in tasks}
    some_ids = [
        v for t in tasks for a in t.gold_actions for v in a.arguments.values() if isinstance(v, str) and is_id(v)
    ]
    assert some_ids and all(value in index.ids for value in some_ids)
    assert len(index.sentences) > len(tasks)


def test_ids_found_anywhere_in_a_literal_at_the_right_line(tau2_data: Path) -> None:
    index = evaluation_index(GateContext(target="airline", data=tau2_data))
    user_id = next(i for i in index.ids if i.count("_") >= 2 and i[-1].isdigit())
    source = f'x = 1\nname = "guest"\nopening = f"I am {{name}} ({user_id}), hi"\n'
    (finding,) = leakage_gate(source, GateContext(target="airline", data=tau2_data)).findings
    assert finding.line == 3 and finding.subject == user_id
    assert "airline evaluation task" in finding.message


def test_a_benchmark_task_id_literal_is_leakage(tau2_data: Path) -> None:
    source = 'Task(task_id="17", goal="x")\n'
    (finding,) = leakage_gate(source, GateContext(target="retail", data=tau2_data)).findings
    assert "task_id '17'" in finding.message


def test_lightly_edited_instructions_are_caught_by_runs_of_words(tau2_data: Path) -> None:
    task = load_domain_data(tau2_data, "retail").task("5")
    instructions = task.user_scenario.instructions
    assert not isinstance(instructions, str)
    words = instructions.reason_for_call.replace("#", "").split()
    assert len(words) >= 12
    edited = "Well, " + " ".join(words[1:12]).upper() + "!"  # case, punctuation and the first word changed
    result = leakage_gate(f"goal = {edited!r}\n", GateContext(target="retail", data=tau2_data))
    assert not result.passed, edited
    assert "retail evaluation task" in result.findings[0].message


def test_dates_amounts_and_short_numbers_are_not_ids() -> None:
    assert not is_id("2024-05-15")
    assert not is_id("19122")
    assert not is_id("100.50")
    assert not is_id("no longer needed")
    assert is_id("#W2378156") and is_id("1656367028") and is_id("credit_card_9513926")


def test_missing_tau2_data_is_a_clear_rejection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TRACE_ENVS_TAU2_DATA", raising=False)
    result = leakage_gate("x = 1\n", GateContext(target="retail"))
    assert result.status == "failed"
    assert "TRACE_ENVS_TAU2_DATA" in result.findings[0].fix
    result = leakage_gate("x = 1\n", GateContext(target="retail", data=tmp_path / "absent"))
    assert "does not exist" in result.findings[0].message


def test_device_modules_are_compared_with_the_device_test_split() -> None:
    from trace_envs.targets.device.builtin import builtin_pool

    scenario = builtin_pool("test")[0]
    context = GateContext(target="device")
    assert leakage_gate("x = 'hello'\n", context).passed
    (finding,) = leakage_gate(f"opening = {scenario.user.opening!r}\nname = {scenario.name!r}\n", context).findings[:1]
    assert "device evaluation scenario" in finding.message
