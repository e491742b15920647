"""tau2's evaluation criteria: an absent list (``None``) and an empty one (``[]``) mean different things.

Upstream skips the DB check only when both ``actions`` and ``env_assertions`` are ``None``; a task whose
gold action list is empty (airline 0, 10, 26, 28, 31, 34, 46; retail 24, 57: the agent must change
nothing) still requires the final database to equal the initial one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.tau2_common import Tau2Domain, Tau2Toolset
from trace_envs.domains.tools import tool
from trace_envs.targets.tau2 import Tau2DomainData, Tau2Evaluator, Tau2Task, gold_trajectory, load_domain_data
from trace_envs.targets.tau2.env import tau2_domain
from trace_envs.targets.tau2.evaluator import action_matches
from trace_envs.targets.tau2.tasks import Action, EnvAssertion

NO_GOLD_ACTIONS = {"airline": ["0", "10", "26", "28", "31", "34", "46"], "retail": ["24", "57"]}

needs_airline = pytest.mark.skipif(
    importlib.util.find_spec("trace_envs.domains.airline") is None, reason="airline domain not present"
)


def domain_setup(shared_data: Path, name: str) -> tuple[Tau2DomainData, Tau2Evaluator]:
    data = load_domain_data(shared_data / "tau2", name)
    domain = tau2_domain(name)
    return data, Tau2Evaluator(domain, domain.load_file(data.db_path))


@pytest.fixture(scope="module")
def retail(shared_data: Path) -> tuple[Tau2DomainData, Tau2Evaluator]:
    return domain_setup(shared_data, "retail")


@pytest.fixture(scope="module")
def airline(shared_data: Path) -> tuple[Tau2DomainData, Tau2Evaluator]:
    return domain_setup(shared_data, "airline")


def stray_write(evaluator: Tau2Evaluator, domain: str) -> tuple[str, dict[str, Any]]:
    """A write that succeeds on the initial database and changes it (the agent should not have made it)."""
    db: Any = evaluator.db
    if domain == "airline":
        reservation = db.reservations["EHGLP3"]  # airline task 0's reservation
        card = next(p for p in db.users[reservation.user_id].payment_methods if p.startswith("credit_card"))
        arguments = {
            "reservation_id": "EHGLP3",
            "total_baggages": reservation.total_baggages + 1,
            "nonfree_baggages": reservation.nonfree_baggages + 1,
            "payment_id": card,
        }
        return "update_reservation_baggages", arguments
    user = db.users[sorted(db.users)[0]]
    address = user.address.model_dump()
    return "modify_user_address", {"user_id": user.user_id, **address, "address1": "1 Elsewhere Road"}


def with_call(evaluator: Tau2Evaluator, messages: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> Any:
    """``messages`` with one more tool call (and its real output) after the user's first message."""
    result = evaluator.toolset.invoke(evaluator.db, ToolCall(name=name, arguments=arguments))
    evaluator.db.restore()
    assert not result.error, result.content
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "extra", "name": name, "arguments": arguments}]}
    return [*messages[:2], call, {"role": "tool", "id": "extra", "content": result.content}, *messages[2:]]


def check_empty_gold_tasks(domain: str, data: Tau2DomainData, evaluator: Tau2Evaluator) -> None:
    tasks = [t for t in data.tasks if t.evaluation_criteria and t.evaluation_criteria.actions == []]
    assert [t.id for t in tasks] == NO_GOLD_ACTIONS[domain]
    name, arguments = stray_write(evaluator, domain)
    for task in tasks:
        clean = gold_trajectory(task)
        result = evaluator.evaluate(task, clean)
        assert result.reward == 1.0 and result.db_match is True, (task.id, result.components)
        assert result.gold_canonical_hash == evaluator.initial_hash
        wrong = evaluator.evaluate(task, with_call(evaluator, clean, name, arguments))
        assert wrong.db_match is False and wrong.components["DB"] == 0.0 and wrong.reward == 0.0, task.id
        assert wrong.replayed_writes == 1 and not wrong.notes
        assert wrong.diagnostics["ACTION"] == 1.0  # no gold action to miss
    assert evaluator.db.touched_count == 0


@needs_airline
def test_airline_tasks_without_gold_actions_still_check_the_database(
    airline: tuple[Tau2DomainData, Tau2Evaluator],
) -> None:
    """The issue's example: airline task 0 plus one ``update_reservation_baggages`` scores 0, as in tau2-bench."""
    check_empty_gold_tasks("airline", *airline)


def test_retail_tasks_without_gold_actions_still_check_the_database(
    retail: tuple[Tau2DomainData, Tau2Evaluator],
) -> None:
    check_empty_gold_tasks("retail", *retail)


def test_db_is_skipped_only_when_both_lists_are_absent(retail: tuple[Tau2DomainData, Tau2Evaluator]) -> None:
    data, evaluator = retail
    task = data.task("24")
    assert task.evaluation_criteria is not None
    messages = with_call(evaluator, gold_trajectory(task), *stray_write(evaluator, "retail"))

    def variant(**criteria: Any) -> Tau2Task:
        return task.model_copy(update={"evaluation_criteria": task.evaluation_criteria.model_copy(update=criteria)})  # type: ignore[union-attr]

    absent = evaluator.evaluate(variant(actions=None, env_assertions=None), messages)
    assert absent.components["DB"] == 1.0 and absent.db_match is None and absent.gold_canonical_hash is None
    only_assertions = evaluator.evaluate(variant(actions=None, env_assertions=[]), messages)
    assert only_assertions.components["DB"] == 0.0 and only_assertions.db_match is False
    # an edited copy of the task (same id, the stray write as its gold action) gets its own gold database
    assert evaluator.evaluate(task, messages).db_match is False
    name, arguments = stray_write(evaluator, "retail")
    expects_write = variant(actions=[Action(action_id="24_x", name=name, arguments=arguments)])
    assert evaluator.evaluate(expects_write, messages).db_match is True


def test_action_match_filters_keys_instead_of_defaulting_to_none() -> None:
    """Upstream compares the argument dicts filtered to the compared keys: a key present with ``null`` on
    one side and absent on the other is a mismatch."""
    gold = Action(action_id="a", name="get_user_details", arguments={"user_id": "u1"})
    assert action_matches(gold, {"name": "get_user_details", "arguments": {"user_id": "u1"}})
    assert action_matches(gold, {"name": "get_user_details", "arguments": '{"user_id": "u1"}'})
    assert not action_matches(gold, {"name": "get_user_details", "arguments": {"user_id": "u1", "extra": None}})
    assert not action_matches(gold, {"name": "get_user_details", "arguments": ["u1"]})
    chosen = gold.model_copy(update={"compare_args": ["user_id", "address2"]})
    assert not action_matches(chosen, {"name": "get_user_details", "arguments": {"user_id": "u1", "address2": None}})
    assert action_matches(chosen, {"name": "get_user_details", "arguments": {"user_id": "u1", "other": 3}})
    by_name = gold.model_copy(update={"compare_args": []})
    assert action_matches(by_name, {"name": "get_user_details", "arguments": {"user_id": "someone else"}})
    assert not action_matches(by_name, {"name": "get_order_details", "arguments": {}})


@tool(kind="read")
def user_lives_in(db: Any, user_id: str, city: str) -> bool:
    """Whether the user's address is in ``city`` (an env-assertion function: returns a bool).

    Args:
        user_id: The user id.
        city: The city.
    """
    return bool(db.users[user_id].address.city == city)


def test_env_assertions_run_on_the_predicted_database(retail: tuple[Tau2DomainData, Tau2Evaluator]) -> None:
    """Assertions see the task's initial state plus the trajectory's writes; a non-bool result is not
    ``True`` (upstream raises); an empty assertion list scores 1."""
    data, base = retail
    toolset = Tau2Toolset([*base.toolset.values(), user_lives_in], owner="RetailTools")
    domain: Tau2Domain[Any] = Tau2Domain("retail", base.domain.state_model, toolset)
    evaluator = Tau2Evaluator(domain, base.db)
    name, arguments = stray_write(evaluator, "retail")
    user_id = arguments["user_id"]
    moved = {**arguments, "city": "Springfield"}
    task = data.task("24")
    assert task.evaluation_criteria is not None
    lives = EnvAssertion(func_name="user_lives_in", arguments={"user_id": user_id, "city": "Springfield"})
    truthy = EnvAssertion(func_name="get_user_details", arguments={"user_id": user_id})
    initialised = task.model_copy(
        update={
            "initial_state": {
                "initialization_actions": [{"env_type": "assistant", "func_name": name, "arguments": moved}]
            },
            "evaluation_criteria": task.evaluation_criteria.model_copy(update={"env_assertions": [lives, truthy]}),
        }
    )
    result = evaluator.evaluate(initialised, gold_trajectory(initialised), reward_basis=("DB", "ENV_ASSERTION"))
    assert [c.met for c in result.env_assertion_checks] == [True, False]
    assert result.components == {"DB": 1.0, "ENV_ASSERTION": 0.0}
    assert any("returned User, not bool" in note for note in result.notes)

    written = task.model_copy(
        update={"evaluation_criteria": task.evaluation_criteria.model_copy(update={"env_assertions": [lives]})}
    )
    messages = with_call(evaluator, gold_trajectory(written), name, moved)
    assert evaluator.evaluate(written, messages, reward_basis=("ENV_ASSERTION",)).reward == 1.0
    assert evaluator.evaluate(written, gold_trajectory(written), reward_basis=("ENV_ASSERTION",)).reward == 0.0
    empty = task.model_copy(
        update={"evaluation_criteria": task.evaluation_criteria.model_copy(update={"env_assertions": []})}
    )
    assert evaluator.evaluate(empty, messages, reward_basis=("ENV_ASSERTION",)).reward == 1.0
    assert base.db.touched_count == 0
