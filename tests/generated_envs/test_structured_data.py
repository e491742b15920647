"""trace/structured-data-v0: the one record that fits every constraint; misreading nested records is caught."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.kits.structured_data.itineraries import MISREAD_CABIN
from generated_envs.structured_data import StructuredDataEnv
from tests.generated_envs.envs_a_variant_ids import STRUCTURED_DATA_RETAIL
from trace_envs.core import ToolCall, format_tool_call
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.retail import RETAIL
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/structured-data-v0"
SEEDS = range(120)


def make(**knobs: Any) -> StructuredDataEnv:
    env = gym.make(ENV_ID, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, StructuredDataEnv)
    return env


@pytest.mark.parametrize("seed", [0, 5, 77])
def test_gym_make_with_seed(seed: int) -> None:
    env = gym.make(ENV_ID, seed=seed)
    observation, info = env.reset()
    assert info["capability"] == "structured_data_reasoning"
    assert info["seed"] == seed
    assert observation == gym.make(ENV_ID).reset(seed=seed)[0]


@pytest.mark.parametrize("env_id", [ENV_ID, STRUCTURED_DATA_RETAIL], ids=["airline", "retail"])
def test_property_suite_200_seeds(env_id: str) -> None:
    check_capability_env(env_id, seeds=range(200))


@pytest.mark.parametrize("variant", ["airline", "retail"])
def test_flawed_actions_score_zero_on_every_seed(variant: str) -> None:
    env = make(variant=variant)
    for seed in range(200):
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        assert flawed is not None
        assert play_actions(env, flawed, seed=seed)[0] == 0.0, seed


def test_variants_use_the_real_domains() -> None:
    assert make().domain is AIRLINE
    assert make(variant="retail").domain is RETAIL
    with pytest.raises(ValueError, match="variant"):
        make(variant="device")


# ----- airline: an agent that reads the search results with a given rule ----------------------------------------
Rule = Callable[[list[dict[str, Any]], str, int, int], bool]
"""Whether an itinerary (its legs) is allowed: (legs, cabin, earliest hour, passengers)."""


def careful(legs: list[dict[str, Any]], cabin: str, earliest: int, passengers: int) -> bool:
    leaves = int(legs[0]["scheduled_departure_time_est"][:2])
    return leaves >= earliest and all(leg["available_seats"][cabin] >= passengers for leg in legs)


def ignores_seats(legs: list[dict[str, Any]], cabin: str, earliest: int, passengers: int) -> bool:
    return int(legs[0]["scheduled_departure_time_est"][:2]) >= earliest


def ignores_time(legs: list[dict[str, Any]], cabin: str, earliest: int, passengers: int) -> bool:
    return all(leg["available_seats"][cabin] >= passengers for leg in legs)


def play_reader(env: StructuredDataEnv, seed: int, allowed: Rule, column: Callable[[str], str]) -> float:
    """Search like the oracle, pick the cheapest allowed itinerary by ``column(cabin)``, book and pay it."""
    env.reset(seed=seed)
    task = env.current_task
    meta = task.metadata
    search = next(s for s in task.solution if isinstance(s, ToolCall) and s.name.startswith("search_"))
    observation, *_ = env.step(format_tool_call(search))
    found = json.loads(observation)
    itineraries = found if meta["onestop"] else [[flight] for flight in found]
    cabin, passengers = meta["cabin"], meta["passengers"]
    earliest = meta["earliest_hour"]
    read = column(cabin)
    best = min(
        (legs for legs in itineraries if allowed(legs, cabin, earliest, passengers)),
        key=lambda legs: sum(int(leg["prices"][read]) for leg in legs),
    )
    total = sum(int(leg["prices"][read]) for leg in best) * passengers
    numbers = [leg["flight_number"] for leg in best]
    if meta["mode"] == "report":
        actions = [f"The cheapest option is {' + '.join(numbers)} at ${total} in total."]
    else:
        booking = next(s for s in task.solution if isinstance(s, ToolCall) and s.name == "book_reservation")
        arguments = {
            **booking.arguments,
            "flights": [{"flight_number": n, "date": search.arguments["date"]} for n in numbers],
            "payment_methods": [{"payment_id": booking.arguments["payment_methods"][0]["payment_id"], "amount": total}],
        }
        actions = [format_tool_call(ToolCall(name="book_reservation", arguments=arguments)), f"Booked, ${total}."]
    reward, _ = play_actions(env, [format_tool_call(search), *actions], seed=seed)
    return reward


def test_reading_the_search_results_correctly_solves_every_seed() -> None:
    """The task is solvable from what the tools show (not only by the oracle that knows the answer)."""
    env = make()
    assert all(play_reader(env, seed, careful, lambda cabin: cabin) == 1.0 for seed in SEEDS)


def test_reading_the_wrong_cabin_price_fails_on_every_seed() -> None:
    """Paper C1: the price of the neighbouring cabin column is taken for the requested cabin's."""
    env = make()
    for seed in SEEDS:
        assert play_reader(env, seed, careful, lambda cabin: MISREAD_CABIN[cabin]) == 0.0, seed


def test_misread_booking_is_rejected_with_a_payment_error() -> None:
    """What the agent sees when it pays the misread price: the booking fails and the database is unchanged."""
    env = make(report_share=0.0)
    for seed in range(30):
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        assert flawed is not None
        env.reset(seed=seed)
        observations = [env.step(action)[0] for action in flawed[:4]]
        assert "Payment amount does not add up" in observations[3]
        reward, info = play_actions(env, flawed, seed=seed)
        assert reward == 0.0 and not info["verdict"]["hash_match"]


@pytest.mark.parametrize(("rule", "kind"), [(ignores_seats, "sold_out"), (ignores_time, "early")])
def test_shortcuts_that_skip_a_constraint_fail(rule: Rule, kind: str) -> None:
    """Cheapest-in-cabin while ignoring seats (or departure time) fails wherever such a trap exists."""
    env = make(distractors=6)
    trapped = 0
    for seed in SEEDS:
        env.reset(seed=seed)
        kinds = env.current_task.metadata["option_kinds"]
        if kind in kinds:
            trapped += 1
            assert play_reader(env, seed, rule, lambda cabin: cabin) == 0.0, seed
    assert trapped >= 30


def test_knobs_shape_the_tasks() -> None:
    onestop = make(onestop_share=1.0, report_share=0.0)
    direct = make(onestop_share=0.0, report_share=1.0, max_passengers=1)
    for seed in range(20):
        onestop.reset(seed=seed)
        task = onestop.current_task
        assert task.metadata["onestop"] and task.metadata["mode"] == "book"
        assert len(task.metadata["target_flights"]) == 2
        direct.reset(seed=seed)
        task = direct.current_task
        assert not task.metadata["onestop"] and task.metadata["mode"] == "report"
        assert task.metadata["passengers"] == 1
        assert all(not isinstance(step, ToolCall) or step.name == "search_direct_flight" for step in task.solution)
    many = make(distractors=8)
    many.reset(seed=1)
    assert len(many.current_task.metadata["option_kinds"]) == 9


# ----- retail ------------------------------------------------------------------------------------------------------
def test_retail_first_variant_matching_one_option_fails_on_every_seed() -> None:
    env = make(variant="retail")
    for seed in SEEDS:
        env.reset(seed=seed)
        meta = env.current_task.metadata
        assert meta["flawed_item"] != meta["target_item"]
        flawed = env.flawed_actions()
        assert flawed is not None
        reward, _ = play_actions(env, flawed, seed=seed)
        assert reward == 0.0, seed


def test_retail_cheapest_ignoring_stock_fails() -> None:
    """'The cheapest in-stock variant': the cheapest one listed is out of stock, so the exchange is refused."""
    env = make(variant="retail", report_share=0.0)
    checked = 0
    for seed in SEEDS:
        env.reset(seed=seed)
        task = env.current_task
        if task.metadata["style"] != "cheapest":
            continue
        lookup = task.solution[2]
        write = task.solution[4]
        assert isinstance(lookup, ToolCall) and isinstance(write, ToolCall)
        env.reset(seed=seed)
        product = json.loads(env.step(format_tool_call(lookup))[0])
        key, value = task.metadata["option"], task.metadata["value"]
        candidates = [v for v in product["variants"].values() if v["options"][key] == value]
        cheapest = min(candidates, key=lambda v: v["price"])
        assert not cheapest["available"]
        shortcut = ToolCall(name=write.name, arguments={**write.arguments, "new_item_ids": [cheapest["item_id"]]})
        reward, _ = play_actions(env, [*env.oracle_actions()[:3], format_tool_call(shortcut), "Done."], seed=seed)
        assert reward == 0.0
        checked += 1
    assert checked >= 15
