"""The device domain under the device envs: ``invoke`` (no trace) behaves exactly like ``execute``; core's
``Plan`` on a device world records expected errors and refuses surprises."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trace_envs.core import Plan, parse_action
from trace_envs.domains.device import AGENT_TOOLSET, DEVICE, dump_world, generate_device_world
from trace_envs.testing.strategies import tool_call_actions

SCHEMAS = DEVICE.toolset.schemas()
WORLDS = [
    generate_device_world(random.Random(seed), settings=flags)
    for seed, flags in enumerate([{}, {"low_battery_mode": True, "wifi": False, "cellular": False}, {"wifi": False}])
]


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(range(len(WORLDS))), st.lists(tool_call_actions(SCHEMAS), min_size=1, max_size=5))
def test_invoke_gives_executes_results_and_state(world: int, actions: list[str]) -> None:
    data = dump_world(WORLDS[world])
    ours, theirs = DEVICE.load_state(data), DEVICE.load_state(data)
    for action in actions:
        for call in parse_action(action).tool_calls:
            assert AGENT_TOOLSET.invoke(ours, call) == AGENT_TOOLSET.execute(theirs, call).result
    assert dump_world(ours) == dump_world(theirs)


def test_plan_records_expected_errors_and_refuses_surprises() -> None:
    plan = Plan(DEVICE, generate_device_world(random.Random(0), settings={"low_battery_mode": True, "wifi": False}))
    ok, error = plan.attempt("set_wifi_status", on=True)
    assert not ok and error == "PermissionError: Wifi cannot be turned on in low battery mode"
    plan.call("set_low_battery_mode_status", on=False)
    assert plan.attempt("set_wifi_status", on=True) == (True, None)
    assert plan.expected_errors == [0] and plan.errors == [error]
    with pytest.raises(RuntimeError, match="already"):
        plan.call("set_wifi_status", on=True)
    with pytest.raises(RuntimeError, match="should fail"):
        plan.call("get_wifi_status", expect_error="PermissionError")
