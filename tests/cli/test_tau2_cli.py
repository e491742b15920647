"""``trace-envs tau2-replay`` and ``tau2-evaluate`` on the benchmark's retail tasks (gold and perturbed)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.targets.tau2 import Tau2Evaluator, gold_trajectory, load_domain_data
from trace_envs.targets.tau2.env import tau2_domain

runner = CliRunner()
app = build_app()
TASKS = ["0", "1", "5", "7", "19", "38", "40", "105"]


@pytest.fixture(scope="module")
def small_retail(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A retail domain folder with the real db.json and a few tasks (keeps the test fast)."""
    source = shared_data / "tau2" / "retail"
    target = tmp_path_factory.mktemp("tau2") / "retail"
    target.mkdir()
    for name in ("db.json", "policy.md"):
        shutil.copy(source / name, target / name)
    tasks = [t for t in json.loads((source / "tasks.json").read_text(encoding="utf-8")) if t["id"] in TASKS]
    (target / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def gold_cases(small_retail: Path) -> list[dict[str, Any]]:
    data = load_domain_data(small_retail, "retail")
    domain = tau2_domain("retail")
    evaluator = Tau2Evaluator(domain, domain.load_file(data.db_path))
    cases = []
    for task in data.tasks:
        _, outputs = evaluator.replay_gold(task)
        cases.append({"task_id": task.id, "messages": gold_trajectory(task, outputs), "model": "ignored"})
    return cases


def test_help() -> None:
    for command in ("tau2-replay", "tau2-evaluate"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "--out" in result.output


def test_replay_writes_hashes_matching_gold_sample(small_retail: Path, shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "replay.json"
    result = runner.invoke(app, ["tau2-replay", str(small_retail), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    gold = json.loads((shared_data / "tau2" / "retail" / "gold_sample.json").read_text())
    assert set(written) == {"__initial__", *TASKS}
    assert written["__initial__"]["canonical_hash"] == gold["__initial__"]["canonical_hash"]
    for task_id in set(TASKS) & set(gold):
        assert written[task_id]["canonical_hash"] == gold[task_id]["canonical_hash"]
    for task_id in TASKS:
        assert written[task_id]["reward"] == 1.0
        assert written[task_id]["components"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert written["105"]["gold_errors"][0]["content"].startswith("Error: Insufficient gift card balance")
    assert "canonical hash" in result.output


def test_evaluate_gold_and_perturbed(small_retail: Path, gold_cases: list[dict[str, Any]], tmp_path: Path) -> None:
    cases = copy.deepcopy(gold_cases)
    perturbed = copy.deepcopy(next(c for c in gold_cases if c["task_id"] == "0"))
    write = max(i for i, m in enumerate(perturbed["messages"]) if m.get("tool_calls"))
    del perturbed["messages"][write : write + 2]  # a missing write
    wrong = copy.deepcopy(next(c for c in gold_cases if c["task_id"] == "0"))
    wrong["messages"][write]["tool_calls"][0]["arguments"]["payment_method_id"] = "gift_card_0000000"  # wrong argument
    told = copy.deepcopy(next(c for c in gold_cases if c["task_id"] == "19"))
    told["messages"] = [m for m in told["messages"] if not str(m.get("content") or "").startswith("To confirm")]
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps({"cases": [*cases, perturbed, wrong, told]}))
    out = tmp_path / "results.json"
    result = runner.invoke(app, ["tau2-evaluate", str(small_retail), str(cases_file), "--out", str(out)])
    assert result.exit_code == 0, result.output
    results = json.loads(out.read_text())["results"]
    assert [r["task_id"] for r in results] == [c["task_id"] for c in cases] + ["0", "0", "19"]
    assert all(r["reward"] == 1.0 for r in results[: len(cases)])
    assert results[-3]["components"] == {"DB": 0.0, "COMMUNICATE": 1.0}
    assert results[-2]["reward"] == 0.0
    assert results[-1]["components"] == {"DB": 1.0, "COMMUNICATE": 0.0}
    for r in results:
        assert set(r) >= {"task_id", "reward", "components", "final_canonical_hash"}
        assert len(r["final_canonical_hash"]) == 64


def test_evaluate_basis_override_and_bad_input(
    small_retail: Path, gold_cases: list[dict[str, Any]], tmp_path: Path
) -> None:
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps({"cases": gold_cases[:2]}))
    out = tmp_path / "results.json"
    result = runner.invoke(
        app, ["tau2-evaluate", str(small_retail), str(cases_file), "--out", str(out), "--reward-basis", "DB,ACTION"]
    )
    assert result.exit_code == 0, result.output
    assert all(set(r["components"]) == {"DB", "ACTION"} for r in json.loads(out.read_text())["results"])
    bad = runner.invoke(
        app, ["tau2-evaluate", str(small_retail), str(cases_file), "--out", str(out), "--reward-basis", "DB,XYZ"]
    )
    assert bad.exit_code != 0 and "invalid reward basis" in bad.output
    cases_file.write_text(json.dumps({"cases": [{"task_id": "0", "messages": [{"role": "robot"}]}]}))
    bad = runner.invoke(app, ["tau2-evaluate", str(small_retail), str(cases_file), "--out", str(out)])
    assert bad.exit_code != 0 and "role must be" in bad.output
    missing = runner.invoke(app, ["tau2-replay", str(tmp_path), "--domain", "retail", "--out", str(out)])
    assert missing.exit_code != 0 and "db.json" in missing.output


@pytest.mark.parametrize(("domain", "count"), [("retail", 114), ("airline", 50)])
def test_replay_every_task_of_the_shipped_domains(domain: str, count: int, shared_data: Path, tmp_path: Path) -> None:
    if domain == "airline":
        pytest.importorskip("trace_envs.domains.airline")
    folder = shared_data / "tau2" / domain
    out = tmp_path / "replay.json"
    result = runner.invoke(app, ["tau2-replay", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert len(written) == count + 1
    gold = json.loads((folder / "gold_sample.json").read_text())
    for task_id, value in gold.items():
        assert written[task_id]["canonical_hash"] == value["canonical_hash"], (domain, task_id)
    assert all(value["reward"] == 1.0 for key, value in written.items() if key != "__initial__")


def _one_error(output: str) -> str:
    """A usage error's text without Typer's box or any whitespace (so a long path wrapped mid-word by
    the 80-column console still matches; compare with :func:`_squash`), checked to be no traceback."""
    assert "Traceback" not in output and "pydantic" not in output
    return _squash("".join(ch for ch in output if ch not in "│╭╮╰╯─"))


def _squash(text: str) -> str:
    return "".join(text.split())


def test_replay_with_the_wrong_domain_is_one_line(small_retail: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["tau2-replay", str(small_retail), "--domain", "airline", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert len(result.output.splitlines()) < 12  # not pydantic's dump of the whole database
    assert _squash("is the tau2 retail database") in _one_error(result.output)
    assert _squash("use domain 'retail'") in _one_error(result.output)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"users": {"a": ', "is not valid JSON"),
        ('{"users": {}, "orders": {}}', "is not a tau2 retail database (products: Field required"),
        ("[1, 2]", "is not a tau2 retail database"),
    ],
)
def test_replay_with_a_corrupted_db_is_one_line(
    small_retail: Path, tmp_path: Path, content: str, expected: str
) -> None:
    folder = tmp_path / "retail"
    shutil.copytree(small_retail, folder)
    (folder / "db.json").write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["tau2-replay", str(folder), "--out", str(tmp_path / "o.json")])
    assert result.exit_code == 2
    assert _squash(expected) in _one_error(result.output)
    assert _squash("restore it from your tau2-bench copy") in _one_error(result.output)
    assert not (tmp_path / "o.json").exists()


def test_replay_prints_a_summary_not_a_row_per_task(small_retail: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["tau2-replay", str(small_retail), "--out", str(tmp_path / "o.json")])
    assert result.exit_code == 0, result.output
    assert f"gold replay of {len(TASKS)} tasks, reward 1.0 on {len(TASKS)}/{len(TASKS)}" in result.output
    assert _squash("2 tasks with a gold action that returns an error, as in tau2: 38, 105") in _squash(result.output)
    assert "┃" not in result.output and len(result.output.splitlines()) < 9


def test_evaluate_counts_in_words(small_retail: Path, gold_cases: list[dict[str, Any]], tmp_path: Path) -> None:
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps({"cases": gold_cases[:1]}))
    result = runner.invoke(app, ["tau2-evaluate", str(small_retail), str(cases_file), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "tau2 retail: 1 trajectory" in result.output and "over 1 case;" in result.output
    cases_file.write_text(json.dumps({"cases": []}))
    empty = runner.invoke(app, ["tau2-evaluate", str(small_retail), str(cases_file), "--out", str(tmp_path / "r2")])
    assert empty.exit_code == 2 and _squash("holds no cases") in _one_error(empty.output)
    assert not (tmp_path / "r2").exists()
