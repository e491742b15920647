"""trace/tool-precision-v0: exactly the right argument values; near-miss values are caught by the verifier."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.tool_precision import ToolPrecisionEnv
from tests.generated_envs.envs_a_variant_ids import TOOL_PRECISION_AIRLINE
from trace_envs.core import ToolCall, format_tool_call
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.retail import RETAIL
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/tool-precision-v0"
SEEDS = range(120)


def make(**knobs: Any) -> ToolPrecisionEnv:
    env = gym.make(ENV_ID, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, ToolPrecisionEnv)
    return env


def write_of(env: ToolPrecisionEnv) -> ToolCall:
    task = env.current_task
    write = task.solution[task.metadata["write_index"]]
    assert isinstance(write, ToolCall)
    return write


def play_with(env: ToolPrecisionEnv, seed: int, **changed: Any) -> tuple[float, dict[str, Any], str]:
    """The oracle's conversation with the write call's arguments changed; returns reward, info, the write's result."""
    env.reset(seed=seed)
    index = env.current_task.metadata["write_index"]
    write = write_of(env)
    actions = env.oracle_actions()
    actions[index] = format_tool_call(ToolCall(name=write.name, arguments={**write.arguments, **changed}))
    env.reset(seed=seed)
    results = [env.step(action)[0] for action in actions[: index + 1]]
    reward, info = play_actions(env, actions, seed=seed)
    return reward, info, results[-1]


@pytest.mark.parametrize("seed", [0, 9, 31])
def test_gym_make_with_seed(seed: int) -> None:
    env = gym.make(ENV_ID, seed=seed)
    observation, info = env.reset()
    assert info["capability"] == "tool_calling_precision"
    assert observation == gym.make(ENV_ID).reset(seed=seed)[0]


@pytest.mark.parametrize("env_id", [ENV_ID, TOOL_PRECISION_AIRLINE], ids=["retail", "airline"])
def test_property_suite_200_seeds(env_id: str) -> None:
    check_capability_env(env_id, seeds=range(200))


def test_variants_use_the_real_domains() -> None:
    assert make().domain is RETAIL
    assert make(variant="airline").domain is AIRLINE


def test_refund_to_the_gift_card_instead_of_the_orders_credit_card_is_caught() -> None:
    """Paper C2: return_delivered_order_items accepts a gift card, so only the verifier can catch it."""
    env = make(payment_change_share=0.0)
    for seed in SEEDS:
        env.reset(seed=seed)
        meta = env.current_task.metadata
        write = write_of(env)
        assert meta["kind"] == "return" and write.name == "return_delivered_order_items"
        original = write.arguments["payment_method_id"]
        assert original.startswith("credit_card_") and meta["near_miss"].startswith("gift_card_")
        state = env.state
        order = state.orders[write.arguments["order_id"]]
        assert order.payment_history[0].payment_method_id == original
        assert meta["near_miss"] in state.users[order.user_id].payment_methods
        reward, info, result = play_with(env, seed, payment_method_id=meta["near_miss"])
        assert not result.startswith("Error"), result  # the tool takes it ...
        assert reward == 0.0 and not info["verdict"]["hash_match"]  # ... the verifier does not


def test_returning_the_twin_variant_is_caught() -> None:
    env = make(payment_change_share=0.0)
    for seed in range(40):
        env.reset(seed=seed)
        write = write_of(env)
        order = env.state.orders[write.arguments["order_id"]]
        returned = write.arguments["item_ids"][0]
        product_id = next(item.product_id for item in order.items if item.item_id == returned)
        twins = [i.item_id for i in order.items if i.product_id == product_id and i.item_id != returned]
        assert len(twins) == 1
        reward, _, result = play_with(env, seed, item_ids=twins)
        assert not result.startswith("Error") and reward == 0.0


def test_first_credit_card_on_the_profile_is_a_shortcut_that_fails() -> None:
    """Payment changes and bags: taking the first card listed instead of the one the user named."""
    for env in (make(payment_change_share=1.0), make(variant="airline")):
        argument = "payment_method_id" if env.knobs.variant == "retail" else "payment_id"  # type: ignore[attr-defined]
        misses = 0
        for seed in SEEDS:
            env.reset(seed=seed)
            write = write_of(env)
            profile_call = next(
                s for s in env.current_task.solution if isinstance(s, ToolCall) and s.name == "get_user_details"
            )
            env.reset(seed=seed)
            profile = json.loads(env.step(format_tool_call(profile_call))[0])
            first_card = next(m for m in profile["payment_methods"] if m.startswith("credit_card_"))
            if first_card == write.arguments[argument]:
                continue
            misses += 1
            reward, _, result = play_with(env, seed, **{argument: first_card})
            assert not result.startswith("Error") and reward == 0.0, seed
        assert misses >= 30


def test_flawed_near_miss_card_fails_on_every_seed() -> None:
    for env in (make(payment_change_share=1.0), make(variant="airline")):
        for seed in SEEDS:
            env.reset(seed=seed)
            meta = env.current_task.metadata
            assert meta["near_miss"] != write_of(env).arguments[meta["argument"]]
            flawed = env.flawed_actions()
            assert flawed is not None
            reward, info = play_actions(env, flawed, seed=seed)
            assert reward == 0.0 and not info["verdict"]["hash_match"], seed


def test_airline_bag_counts_must_be_exact() -> None:
    """Counting only the added bags as paid (forgetting the ones already paid) is caught where any were paid."""
    env = make(variant="airline")
    caught = 0
    for seed in SEEDS:
        env.reset(seed=seed)
        write = write_of(env)
        reservation = env.state.reservations[write.arguments["reservation_id"]]
        if reservation.nonfree_baggages == 0:
            continue
        added = write.arguments["total_baggages"] - reservation.total_baggages
        reward, _, result = play_with(env, seed, nonfree_baggages=added)
        assert not result.startswith("Error") and reward == 0.0
        caught += 1
    assert caught >= 30


def test_near_miss_knob_sets_the_profile_size() -> None:
    for count in (1, 2, 3):
        env = make(near_miss_methods=count, payment_change_share=0.0)
        env.reset(seed=4)
        write = write_of(env)
        order = env.state.orders[write.arguments["order_id"]]
        assert len(env.state.users[order.user_id].payment_methods) == 2 + count
