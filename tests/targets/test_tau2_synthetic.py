"""The tau2 target pipeline on a synthetic tau2-format folder built by generate_retail_db (no benchmark data)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import trace_envs  # noqa: F401 - registers the env ids
from trace_envs.cli import build_app
from trace_envs.domains.retail import POLICY, RETAIL, generate_retail_db
from trace_envs.domains.tau2_common import file_db_dump
from trace_envs.targets.tau2 import Tau2Evaluator, gold_trajectory, load_domain_data
from trace_envs.targets.tau2.env import tau2_domain

from .fake_models import ScriptedUserModel


def _task(task_id: str, actions: list[dict[str, Any]], info: list[str]) -> dict[str, Any]:
    return {
        "id": task_id,
        "description": {"purpose": None, "relevant_policies": None, "notes": None},
        "user_scenario": {
            "persona": None,
            "instructions": {
                "domain": "retail",
                "reason_for_call": "You want to sort out an order.",
                "known_info": None,
                "unknown_info": None,
                "task_instructions": "Be brief.",
            },
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": [{"action_id": f"{task_id}_{i}", **a, "info": None} for i, a in enumerate(actions)],
            "communicate_info": info,
            "nl_assertions": ["The agent was polite."],
            "reward_basis": ["DB", "NL_ASSERTION"],
        },
    }


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = generate_retail_db(random.Random(5), users=6, products=5, orders_per_user=(2, 3))
    pending = [o for o in db.orders.values() if o.status == "pending"]
    user = db.users[pending[0].user_id]
    tasks = [
        _task(
            "0",
            [
                {"name": "find_user_id_by_email", "arguments": {"email": user.email}},
                {
                    "name": "cancel_pending_order",
                    "arguments": {"order_id": pending[0].order_id, "reason": "no longer needed"},
                },
            ],
            [str(pending[0].payment_history[0].amount)],
        ),
        _task("1", [{"name": "get_order_details", "arguments": {"order_id": pending[1].order_id}}], []),
    ]
    root = tmp_path_factory.mktemp("synthetic_tau2")
    folder = root / "retail"
    folder.mkdir()
    (folder / "db.json").write_text(json.dumps(file_db_dump(db)), encoding="utf-8")
    (folder / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    (root / "user_simulator").mkdir()
    (root / "user_simulator" / "simulation_guidelines.md").write_text("Play the customer.\n", encoding="utf-8")
    return folder


def test_evaluator_gold_and_perturbed(synthetic: Path) -> None:
    data = load_domain_data(synthetic, "retail")
    domain = tau2_domain("retail")
    evaluator = Tau2Evaluator(domain, domain.load_file(data.db_path))
    task = data.task("0")
    digest, outputs = evaluator.replay_gold(task)
    assert digest != evaluator.initial_hash
    messages = gold_trajectory(task, outputs)
    assert evaluator.evaluate(task, messages).reward == 1.0
    assert evaluator.evaluate(task, messages[:-4] + messages[-2:]).components["DB"] == 0.0
    silent = [m for m in messages if not str(m.get("content") or "").startswith("To confirm")]
    assert evaluator.evaluate(task, silent).components == {"DB": 1.0, "COMMUNICATE": 0.0}
    assert evaluator.gold_hash(data.task("1")) == evaluator.initial_hash


def test_env_episode_and_replay_cli(synthetic: Path, tmp_path: Path) -> None:
    env = gym.make("trace/tau2-retail-v0", data_dir=str(synthetic), task_id="0", user_model=ScriptedUserModel(["Hi"]))
    observation, info = env.reset(seed=0)
    assert observation == "Hi" and info["policy"] == POLICY
    task = env.unwrapped.task  # type: ignore[attr-defined]
    for action in task.gold_actions:
        env.step(json.dumps({"name": action.name, "arguments": action.arguments}))
    amount = task.evaluation_criteria.communicate_info[0]
    _, reward, terminated, _, info = env.step(f"Done: {amount} will be refunded.")
    assert terminated and reward == 1.0 and info["ended"] == "user_stop"
    out = tmp_path / "replay.json"
    result = CliRunner().invoke(build_app(), ["tau2-replay", str(synthetic), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["__initial__"]["canonical_hash"] == RETAIL.state_hash(RETAIL.load_file(synthetic / "db.json"))
    assert written["0"]["reward"] == written["1"]["reward"] == 1.0
    assert written["1"]["canonical_hash"] == written["__initial__"]["canonical_hash"]
