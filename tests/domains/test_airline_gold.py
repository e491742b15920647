"""Every airline task's gold actions replay on a fresh database; final hashes match gold_sample.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.airline import AIRLINE, FlightDB, load_db


@pytest.fixture(scope="module")
def airline_dir(shared_data: Path) -> Path:
    return shared_data / "tau2" / "airline"


@pytest.fixture(scope="module")
def tasks(airline_dir: Path) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((airline_dir / "tasks.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def gold_sample(airline_dir: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((airline_dir / "gold_sample.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def replayed(airline_dir: Path, tasks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each task's gold actions on one journaled database, restored between tasks (= a fresh copy)."""
    db = load_db(airline_dir / "db.json")
    out: dict[str, dict[str, Any]] = {}
    for task in tasks:
        db.restore()
        errors = []
        for action in task["evaluation_criteria"]["actions"]:
            call = ToolCall(name=action["name"], arguments=action["arguments"], id=action["action_id"])
            result = AIRLINE.toolset.invoke(db, call)
            if result.error:
                errors.append((action["action_id"], result.content))
        out[task["id"]] = {"hash": AIRLINE.state_hash(db), "errors": errors, "touched": db.touched_count}
    db.restore()
    out["__initial__"] = {"hash": AIRLINE.state_hash(db)}
    return out


def test_the_shared_task_file_has_50_tasks_and_142_gold_actions(tasks: list[dict[str, Any]]) -> None:
    assert len(tasks) == 50
    assert sum(len(task["evaluation_criteria"]["actions"]) for task in tasks) == 142


def test_every_gold_action_succeeds(replayed: dict[str, dict[str, Any]]) -> None:
    failures = {task_id: info["errors"] for task_id, info in replayed.items() if info.get("errors")}
    assert failures == {}, "reference section 9: every airline gold action succeeds on the shared DB"


def test_initial_hash_matches_gold_sample(replayed: dict[str, dict[str, Any]], gold_sample: dict[str, Any]) -> None:
    assert replayed["__initial__"]["hash"] == gold_sample["__initial__"]["canonical_hash"]


def test_final_hashes_match_gold_sample(replayed: dict[str, dict[str, Any]], gold_sample: dict[str, Any]) -> None:
    sampled = [task_id for task_id in gold_sample if task_id != "__initial__"]
    assert len(sampled) >= 5
    mismatched = {
        task_id: (replayed[task_id]["hash"], gold_sample[task_id]["canonical_hash"])
        for task_id in sampled
        if replayed[task_id]["hash"] != gold_sample[task_id]["canonical_hash"]
    }
    assert mismatched == {}


def test_read_only_tasks_keep_the_initial_hash(
    replayed: dict[str, dict[str, Any]], tasks: list[dict[str, Any]]
) -> None:
    write_tools = {name for name in AIRLINE.toolset if AIRLINE.toolset[name].mutates}
    read_only = [t["id"] for t in tasks if not {a["name"] for a in t["evaluation_criteria"]["actions"]} & write_tools]
    assert read_only, "the shared tasks include tasks whose gold actions only read"
    initial = replayed["__initial__"]["hash"]
    assert all(replayed[task_id]["hash"] == initial for task_id in read_only)
    assert all(replayed[task_id]["touched"] == 0 for task_id in read_only)
    changed = [t["id"] for t in tasks if t["id"] not in read_only]
    assert all(replayed[task_id]["hash"] != initial for task_id in changed)


def test_journaled_replay_equals_replay_on_a_freshly_loaded_db(
    airline_dir: Path, tasks: list[dict[str, Any]], replayed: dict[str, dict[str, Any]]
) -> None:
    # Task 23 books three reservations for one user, task 44 changes many reservations and flights.
    for task_id in ("23", "44"):
        fresh: FlightDB = load_db(airline_dir / "db.json")
        task = next(t for t in tasks if t["id"] == task_id)
        for action in task["evaluation_criteria"]["actions"]:
            AIRLINE.toolset.invoke(fresh, ToolCall(name=action["name"], arguments=action["arguments"]))
        assert AIRLINE.state_hash(fresh) == replayed[task_id]["hash"]
