"""trace/datetime-v0: dates from the date-time tools; guessing from the raw timestamp and 2023 searches fail."""

from __future__ import annotations

import datetime as dt
from typing import Any

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.datetime_reasoning import TRAINING_YEAR, DatetimeEnv
from trace_envs.core import ToolCall, fact_pattern, format_tool_call
from trace_envs.domains.device import DEVICE
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env

ENV_ID = "trace/datetime-v0"
SEEDS = range(160)


def make(**knobs: Any) -> DatetimeEnv:
    env = gym.make(ENV_ID, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, DatetimeEnv)
    return env


def with_date_call(env: DatetimeEnv, arguments: dict[str, int], seed: int) -> tuple[float, dict[str, Any]]:
    """The oracle with the datetime_info_to_timestamp call's date replaced, and the write using its result."""
    env.reset(seed=seed)
    solution = env.current_task.solution
    index = next(
        i for i, s in enumerate(solution) if isinstance(s, ToolCall) and s.name == "datetime_info_to_timestamp"
    )
    call = solution[index]
    assert isinstance(call, ToolCall)
    changed = ToolCall(name=call.name, arguments={**call.arguments, **arguments})
    value = float(env.step(format_tool_call(changed))[0])
    write = solution[index + 1]
    assert isinstance(write, ToolCall) and write.name in ("add_reminder", "modify_reminder")
    actions = env.oracle_actions()
    actions[index] = format_tool_call(changed)
    actions[index + 1] = format_tool_call(
        ToolCall(name=write.name, arguments={**write.arguments, "reminder_timestamp": value})
    )
    return play_actions(env, actions, seed=seed)


@pytest.mark.parametrize("seed", [0, 3, 77])
def test_gym_make_with_seed(seed: int) -> None:
    env = gym.make(ENV_ID, seed=seed)
    observation, info = env.reset()
    assert info["capability"] == "datetime_reasoning"
    assert observation == gym.make(ENV_ID).reset(seed=seed)[0]


def test_property_suite_200_seeds() -> None:
    check_capability_env(ENV_ID, seeds=range(200))


def test_real_device_tools_and_clock() -> None:
    env = make()
    _, info = env.reset(seed=1)
    assert env.domain is DEVICE
    reference = {s["function"]["name"]: s for s in DEVICE.toolset.schemas()}
    assert all(schema == reference[schema["function"]["name"]] for schema in info["tools"])
    assert env.step(format_tool_call(ToolCall(name="get_current_timestamp", arguments={})))[0] == repr(env.state.now)


def test_the_clock_and_time_zone_vary_by_seed() -> None:
    env = make()
    days, offsets, years = set(), set(), set()
    for seed in SEEDS:
        env.reset(seed=seed)
        meta = env.current_task.metadata
        moment = dt.datetime.fromtimestamp(
            meta["now"], tz=dt.timezone(dt.timedelta(seconds=meta["utc_offset_seconds"]))
        )
        days.add(moment.date())
        offsets.add(meta["utc_offset_seconds"])
        years.add(moment.year)
    assert len(days) >= 140 and len(offsets) >= 8 and set(range(2025, 2031)) <= years <= set(range(2024, 2032))


def test_a_memorised_answer_fails_on_other_seeds() -> None:
    """Replaying another seed's correct reminder (its date) is wrong here: the date must be read each time."""
    env = make(kinds=["reminder"])
    for seed in range(60):
        env.reset(seed=seed + 1000)
        other = env.oracle_actions()
        reward, _ = play_actions(env, other, seed=seed)
        assert reward == 0.0, seed


def test_guessing_todays_date_from_the_raw_timestamp_is_caught() -> None:
    """Paper C2 example 1: get_current_timestamp, then datetime_info_to_timestamp with a guessed (off by one) day."""
    env = make(kinds=["reminder", "reschedule", "shift"])
    for seed in SEEDS:
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        assert flawed is not None
        assert not any('"timestamp_to_datetime_info"' in a for a in flawed)
        reward, info = play_actions(env, flawed, seed=seed)
        assert reward == 0.0 and not info["verdict"]["hash_match"], seed


def test_decoding_the_timestamp_in_utc_fails_where_the_local_date_differs() -> None:
    """A model that decodes the raw timestamp correctly but in UTC gets the device's day wrong near midnight."""
    env = make(kinds=["reminder"])
    caught = 0
    for seed in range(300):
        env.reset(seed=seed)
        meta = env.current_task.metadata
        zone = dt.timezone(dt.timedelta(seconds=meta["utc_offset_seconds"]))
        local, utc = (
            dt.datetime.fromtimestamp(meta["now"], tz=zone).date(),
            dt.datetime.fromtimestamp(meta["now"], tz=dt.UTC).date(),
        )
        if local == utc:
            continue
        solution = env.current_task.solution
        call = next(s for s in solution if isinstance(s, ToolCall) and s.name == "datetime_info_to_timestamp")
        target = dt.date(call.arguments["year"], call.arguments["month"], call.arguments["day"])
        guess = target + (utc - local)
        reward, _ = with_date_call(env, {"year": guess.year, "month": guess.month, "day": guess.day}, seed)
        assert reward == 0.0, seed
        caught += 1
    assert caught >= 40


def test_searching_the_holiday_in_2023_is_caught() -> None:
    """Paper C2 example 2: search_holiday(..., year=2023) gives a negative day count."""
    env = make(kinds=["holiday"])
    for seed in SEEDS:
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        assert flawed is not None and f'"year": {TRAINING_YEAR}' in flawed[1]
        reward, info = play_actions(env, flawed, seed=seed)
        verdict = info["verdict"]
        assert reward == 0.0 and verdict["hash_match"] and not any(verdict["facts_told"].values()), seed
        assert "days away" in env.messages[-2]["content"] and "-" in env.messages[-2]["content"]


def test_holiday_already_past_this_year_is_searched_in_the_next_year() -> None:
    env = make(kinds=["holiday"])
    next_year = 0
    for seed in SEEDS:
        env.reset(seed=seed)
        task = env.current_task
        searches = [s for s in task.solution if isinstance(s, ToolCall) and s.name == "search_holiday"]
        local_year = dt.datetime.fromtimestamp(
            task.metadata["now"], tz=dt.timezone(dt.timedelta(seconds=task.metadata["utc_offset_seconds"]))
        ).year
        assert searches[0].arguments["year"] == local_year
        if len(searches) == 2:
            assert searches[1].arguments["year"] == local_year + 1 == task.metadata["year"]
            next_year += 1
        days = int(task.required_facts[0].split()[0])
        assert 0 <= days <= 366
    assert next_year >= 10


def test_a_day_count_only_matches_as_a_whole_number() -> None:
    assert fact_pattern("23 day").search("christmas is 23 days away")
    assert not fact_pattern("23 day").search("christmas is -823 days away")
    assert not fact_pattern("23 day").search("christmas is -23 days away")
    assert fact_pattern("March 2").search("on march 2 at 5 pm")
    assert not fact_pattern("March 2").search("on march 27 at 5 pm")


def test_every_kind_is_drawn_and_solved() -> None:
    env = make()
    kinds: dict[str, int] = {}
    for seed in range(100):
        env.reset(seed=seed)
        kind = env.current_task.metadata["kind"]
        kinds[kind] = kinds.get(kind, 0) + 1
    assert set(kinds) == {"reminder", "reschedule", "shift", "holiday"} and min(kinds.values()) >= 15


def test_without_timezones_the_device_runs_in_utc() -> None:
    env = make(vary_timezone=False, min_year=2026, max_year=2026)
    for seed in range(20):
        env.reset(seed=seed)
        assert env.state.SIMULATION.utc_offset_seconds == 0
        assert dt.datetime.fromtimestamp(env.state.now, tz=dt.UTC).year == 2026


@pytest.mark.parametrize("knobs", [{"min_year": 2023}, {"min_year": 2030, "max_year": 2026}, {"kinds": ["x"]}])
def test_bad_knobs_name_the_problem(knobs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="DatetimeEnv"):
        DatetimeEnv(**knobs)
