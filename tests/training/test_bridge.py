"""The Gymnasium-to-TRL bridge: generated tool methods, seeds, user turns, verifier reward."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_envs.core import STOP_TOKEN
from trace_envs.training import (
    SEND_MESSAGE_TOOL,
    build_rows,
    make_capability_env,
    oracle_conversation,
    tool_schemas,
    trl_environment,
)
from trace_envs.training.bridge import ENDED_NOTE

ENV = "trace/order-cancel-v0"
_ORDER_CANCEL = trl_environment(ENV)


def test_tool_methods_mirror_the_domain_schemas() -> None:
    cls = trl_environment(ENV)
    env = make_capability_env(ENV)
    schemas = {s["function"]["name"]: s["function"] for s in tool_schemas(cls)}
    assert set(schemas) == {*env.toolset, SEND_MESSAGE_TOOL}
    for domain_schema in env.tool_schemas:
        fn = domain_schema["function"]
        ours = schemas[fn["name"]]
        assert ours["description"] == fn["description"]
        assert set(ours["parameters"]["properties"]) == set(fn["parameters"]["properties"])
        assert sorted(ours["parameters"]["required"]) == sorted(fn["parameters"].get("required", []))
        for arg, spec in fn["parameters"]["properties"].items():
            assert ours["parameters"]["properties"][arg]["type"] == spec["type"]
            assert ours["parameters"]["properties"][arg]["description"] == spec["description"]
    method = cls.get_order_details
    assert "Args:" in (method.__doc__ or "")
    assert list(inspect.signature(method).parameters) == ["self", "order_id"]
    assert method.__annotations__["order_id"] is str


def test_reset_uses_the_row_seed_and_oracle_scores_one() -> None:
    cls = trl_environment(ENV)
    rows = build_rows([ENV], [5, 6])
    a, b = cls(), cls()
    a.reset(**rows[0])
    b.reset(**rows[0])
    assert a._env.task == b._env.task
    assert a._seed == b._seed == 5
    b.reset(**rows[1])
    assert b._env.task != a._env.task
    for seed in range(6):
        episode = oracle_conversation(cls, seed)
        assert episode["reward"] == 1.0
        assert episode["messages"][-1]["role"] == "assistant"


def test_reset_rejects_a_row_built_for_another_seed() -> None:
    cls = trl_environment(ENV)
    row = build_rows([ENV], [1])[0]
    with pytest.raises(ValueError, match="row's prompt"):
        cls().reset(**{**row, "seed": 2})
    with pytest.raises(KeyError, match="seed"):
        cls().reset(prompt=row["prompt"])


def test_user_turns_errors_and_the_end_of_the_episode() -> None:
    cls = trl_environment(ENV)
    env = cls()
    env.reset(seed=3)
    order_id = env._env.task.metadata["order_id"]
    assert order_id in env.send_message_to_user(message="Could you tell me your order id?")
    assert "unexpected argument" in env.get_order_details(order_ide="x")
    assert "Order not found" in env.cancel_order(order_id="#W0")
    closing = env.send_message_to_user(message="Goodbye.")
    assert ENDED_NOTE in closing and STOP_TOKEN not in closing
    assert env.get_order_details(order_id=order_id) == ENDED_NOTE
    assert env.get_reward() == 0.0  # the user was never told the outcome


def test_final_plain_message_is_delivered_before_the_verdict() -> None:
    cls = trl_environment(ENV)
    env = cls()
    env.reset(seed=3)  # seed 3: an order that is already delivered
    status = env._env.task.metadata["status"]
    env.get_order_details(order_id=env._env.task.metadata["order_id"])
    assert env._finish(f"Sorry, that order is already {status}.") == 1.0
    assert env.get_reward() == 1.0


def test_unknown_env_and_non_capability_env_are_clear_errors() -> None:
    with pytest.raises(Exception, match=r"CartPole|not a trace_envs CapabilityEnv"):
        trl_environment("CartPole-v1")


def _capability_env_ids() -> list[str]:
    import trace_envs
    from trace_envs.core import CapabilityEnv
    from trace_envs.registry import env_class

    ids = []
    for env_id in trace_envs.list_envs():
        cls = env_class(env_id)
        if isinstance(cls, type) and issubclass(cls, CapabilityEnv):
            ids.append(env_id)
    return ids


@pytest.mark.parametrize("env_id", _capability_env_ids())
def test_every_registered_capability_env_bridges(env_id: str) -> None:
    """Schemas render for TRL and the reference solution still scores 1.0 when played through the bridge."""
    cls = trl_environment(env_id)
    names = {s["function"]["name"] for s in tool_schemas(cls)}
    assert names == {*make_capability_env(env_id).toolset, SEND_MESSAGE_TOOL}
    for seed in (0, 1):
        assert oracle_conversation(cls, seed)["reward"] == 1.0


@settings(max_examples=60, deadline=None)
@given(
    tool=st.sampled_from(["get_order_details", "cancel_order", SEND_MESSAGE_TOOL]),
    arguments=st.dictionaries(
        st.text(min_size=1, max_size=12),
        st.one_of(st.none(), st.integers(), st.text(max_size=30), st.lists(st.integers(), max_size=3)),
        max_size=3,
    ),
)
def test_any_tool_arguments_give_an_observation_never_an_exception(tool: str, arguments: dict[str, object]) -> None:
    env = _ORDER_CANCEL()
    env.reset(seed=1)
    if tool == SEND_MESSAGE_TOOL:
        observation = env.send_message_to_user(message=repr(arguments))
    else:
        observation = getattr(env, tool)(**arguments)  # unknown or ill-typed arguments: an error observation
    assert isinstance(observation, str)
    assert 0.0 <= env.get_reward() <= 1.0
