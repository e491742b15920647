"""``Plan`` writes a reference solution by running a domain's real tools while the task is built (the initial
state recorded first): on the toy shop, tau2 retail and tau2 airline (the device envs use it too)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from trace_envs.core import Domain, Plan, Task, ToolCall, UserFact, UserScript, check_replies
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.generator import generate_airline_db
from trace_envs.domains.retail import RETAIL
from trace_envs.domains.retail.generator import generate_retail_db
from trace_envs.domains.toy_shop import TOY_SHOP, Order, ShopState


def replay(domain: Domain[Any], task: Task) -> tuple[str, list[int]]:
    """The gold replay: the hash after the reference's calls on a fresh state, and the steps that failed."""
    state = domain.load_state(task.initial_state)
    failed = [
        index
        for index, step in enumerate(task.solution)
        if isinstance(step, ToolCall) and domain.toolset.invoke(state, step).error
    ]
    return domain.state_hash(state), failed


def shop() -> ShopState:
    return ShopState(orders={"#W1": Order(order_id="#W1", user_name="Ava Lee", item="backpack", status="pending")})


def test_values_are_the_tools_own_and_the_initial_state_is_recorded_first() -> None:
    state = shop()
    plan = Plan(TOY_SHOP, state)
    assert plan.state is state  # taken over, not copied
    order = plan.call("get_order_details", order_id="#W1")
    assert isinstance(order, Order) and order.status == "pending"
    assert plan.call("cancel_order", order_id="#W1").status == "cancelled"
    assert plan.initial_state["orders"]["#W1"]["status"] == "pending"
    assert state.orders["#W1"].status == "cancelled"
    from_json = Plan(TOY_SHOP, plan.initial_state)  # JSON data: a fresh state is loaded
    from_json.call("cancel_order", order_id="#W1")
    assert plan.initial_state["orders"]["#W1"]["status"] == "pending"
    assert plan.steps == [
        ToolCall(name="get_order_details", arguments={"order_id": "#W1"}),
        ToolCall(name="cancel_order", arguments={"order_id": "#W1"}),
    ]


def test_messages_state_the_replies_they_need_and_the_task_carries_them() -> None:
    plan = Plan(TOY_SHOP, shop())
    plan.ask("Could you tell me your order number?")
    plan.call("get_order_details", order_id="#W1")
    assert plan.peek("get_order_details", order_id="#W1").item == "backpack"  # not recorded
    plan.confirm("I will cancel order #W1. Shall I proceed?")
    plan.call("cancel_order", order_id="#W1")
    plan.say("Your order #W1 is cancelled.")
    user = UserScript(opening="Cancel my order.", facts=[UserFact(keys=["order number"], answer="#W1")])
    task = plan.task(goal="Cancel #W1.", user=user, required_facts=["cancelled"])
    assert task.user.replies == ["answer", "confirm", "close"]
    assert [s if isinstance(s, str) else s.name for s in task.solution] == [
        "Could you tell me your order number?",
        "get_order_details",
        "I will cancel order #W1. Shall I proceed?",
        "cancel_order",
        "Your order #W1 is cancelled.",
    ]
    assert check_replies(task) is None
    assert replay(TOY_SHOP, task) == (TOY_SHOP.state_hash(plan.state), [])
    with pytest.raises(ValueError, match="differs from the plan"):
        plan.task(goal="x", user=user.model_copy(update={"replies": ["close"]}))


def test_expected_failures_are_recorded_and_surprises_refused() -> None:
    plan = Plan(TOY_SHOP, shop())
    assert plan.call("get_order_details", expect_error="Error: Order not found", order_id="#W9").startswith("Error")
    assert plan.attempt("cancel_order", order_id="#W9") == (False, "Error: Order not found")
    assert plan.expected_errors == [0, 1] and plan.errors == ["Error: Order not found"] * 2
    with pytest.raises(RuntimeError, match="failed: Error: Order not found"):
        plan.call("cancel_order", order_id="#W8")
    with pytest.raises(RuntimeError, match="should fail"):
        plan.call("get_order_details", expect_error="Error", order_id="#W1")


def test_on_retail_the_plan_runs_tau2s_tools_under_tau2s_calling_rules() -> None:
    db = generate_retail_db(random.Random(3))
    order = next(o for o in db.orders.values() if o.status == "pending")
    email = db.users[order.user_id].email
    plan = Plan(RETAIL, db)
    assert plan.call("find_user_id_by_email", email=email) == order.user_id
    assert plan.call("get_order_details", order_id=order.order_id).status == "pending"
    cancelled = plan.call("cancel_pending_order", order_id=order.order_id, reason="no longer needed")
    assert cancelled.status == "cancelled"
    error = plan.call("cancel_pending_order", expect_error="Error:", order_id=order.order_id, reason="no longer needed")
    assert error == "Error: Non-pending order cannot be cancelled"
    plan.say(f"Order {order.order_id} is cancelled.")
    task = plan.task(goal="Cancel it.", user=UserScript(opening="Cancel my order."))
    assert task.initial_state["orders"][order.order_id]["status"] == "pending"
    assert replay(RETAIL, task) == (RETAIL.state_hash(plan.state), [3]) and task.expected_errors == [3]


def test_on_airline_the_plan_reads_and_writes_the_flight_database() -> None:
    db = generate_airline_db(random.Random(5))
    reservation = next(r for r in db.reservations.values() if r.status != "cancelled")
    plan = Plan(AIRLINE, db)
    user = plan.call("get_user_details", user_id=reservation.user_id)
    assert reservation.reservation_id in user.reservations
    assert plan.call("cancel_reservation", reservation_id=reservation.reservation_id).status == "cancelled"
    missing = plan.call("get_reservation_details", expect_error="Error:", reservation_id="ZZZZZZ")
    assert "not found" in missing
    task = plan.task(goal="Cancel it.", user=UserScript(opening="Cancel my trip."))
    assert replay(AIRLINE, task) == (AIRLINE.state_hash(plan.state), [2])
    assert AIRLINE.state_hash(plan.state) != AIRLINE.state_hash(AIRLINE.load_state(task.initial_state))
