"""Every retail task's gold actions replay on a fresh database; final hashes match gold_sample.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.retail import RETAIL

# Gold actions that fail upstream too (reference section 9): task id -> [(action id, message)].
EXPECTED_ERRORS = {
    "2": [("2_1", "Error: Product not found")],
    "3": [("3_1", "Error: Product not found")],
    "4": [("4_1", "Error: Product not found")],
    "35": [("35_0", "Error: User not found")],
    "37": [("37_0", "Error: User not found")],
    "38": [("38_0", "Error: User not found")],
    "39": [("39_0", "Error: User not found")],
    "46": [("46_1", "Error: Order not found"), ("46_2", "Error: Order not found")],
    "47": [("47_1", "Error: Order not found"), ("47_2", "Error: Order not found")],
    "54": [("54_0", "Error: User not found")],
    "55": [("55_0", "Error: User not found")],
    "64": [("64_6", "Error: Non-delivered order cannot be exchanged")],
    "67": [("67_0", "Error: User not found"), ("67_1", "Error: User not found")],
    "68": [("68_0", "Error: User not found")],
    "105": [("106_0", "Error: Insufficient gift card balance to pay for the price difference")],
}


@pytest.fixture(scope="module")
def retail_dir(shared_data: Path) -> Path:
    return shared_data / "tau2" / "retail"


@pytest.fixture(scope="module")
def replayed(retail_dir: Path) -> dict[str, dict[str, Any]]:
    """Each task's gold actions on one journaled database, restored between tasks (= a fresh copy)."""
    tasks = json.loads((retail_dir / "tasks.json").read_text(encoding="utf-8"))
    db = RETAIL.load_file(retail_dir / "db.json")
    out: dict[str, dict[str, Any]] = {"__initial__": {"hash": RETAIL.state_hash(db)}}
    for task in tasks:
        db.restore()
        errors = []
        for action in task["evaluation_criteria"]["actions"]:
            result = RETAIL.toolset.invoke(db, ToolCall(name=action["name"], arguments=action["arguments"]))
            if result.error:
                errors.append((action["action_id"], result.content))
        out[task["id"]] = {"hash": RETAIL.state_hash(db), "errors": errors}
    db.restore()
    out["__after__"] = {"hash": RETAIL.state_hash(db)}
    return out


def test_all_114_tasks_replay_with_exactly_the_upstream_failures(replayed: dict[str, dict[str, Any]]) -> None:
    tasks = {k: v for k, v in replayed.items() if not k.startswith("__")}
    assert len(tasks) == 114
    errors = {task_id: value["errors"] for task_id, value in tasks.items() if value["errors"]}
    assert errors == EXPECTED_ERRORS


def test_hashes_match_gold_sample(replayed: dict[str, dict[str, Any]], retail_dir: Path) -> None:
    gold = json.loads((retail_dir / "gold_sample.json").read_text(encoding="utf-8"))
    assert gold["__initial__"]["canonical_hash"] == replayed["__initial__"]["hash"]
    for task_id, value in gold.items():
        assert replayed[task_id]["hash"] == value["canonical_hash"], task_id


def test_restore_returns_to_the_initial_database(replayed: dict[str, dict[str, Any]]) -> None:
    assert replayed["__after__"]["hash"] == replayed["__initial__"]["hash"]


def test_read_only_tasks_keep_the_initial_hash(replayed: dict[str, dict[str, Any]], retail_dir: Path) -> None:
    tasks = json.loads((retail_dir / "tasks.json").read_text(encoding="utf-8"))
    reads = [
        t["id"]
        for t in tasks
        if not any(RETAIL.toolset[a["name"]].mutates for a in t["evaluation_criteria"]["actions"])
    ]
    assert reads
    for task_id in reads:
        assert replayed[task_id]["hash"] == replayed["__initial__"]["hash"]
