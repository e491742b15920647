"""Built-in device scenarios, the scenario format and the seeded generator."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers trace/device-v0)
from trace_envs.core import STOP_TOKEN
from trace_envs.targets.device import (
    DeviceEnv,
    DeviceScenario,
    builtin_scenarios,
    dump_scenarios,
    generate_scenario,
    load_scenarios,
    mean_similarity,
    perfect_count,
    score_scenarios,
    summarize,
)

BUILTIN = builtin_scenarios()


def play(env: DeviceEnv, actions: list[str]) -> float:
    for action in [*actions, STOP_TOKEN]:
        _, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return float(reward)
    raise AssertionError("the episode did not end")


def test_at_least_40_scenarios_split_and_covering_the_categories() -> None:
    assert len(BUILTIN) >= 40
    assert len({s.name for s in BUILTIN}) == len(BUILTIN)
    splits = Counter(s.split for s in BUILTIN)
    assert splits["train"] >= 25 and splits["test"] >= 10
    assert [s.name for s in builtin_scenarios("train")] + [s.name for s in builtin_scenarios("test")] != []
    categories = Counter(c for s in BUILTIN for c in s.categories)
    for category in ("STATE_DEPENDENCY", "CANONICALIZATION", "INSUFFICIENT_INFORMATION", "MULTIPLE_TOOL_CALL",
                     "SINGLE_TOOL_CALL", "MULTIPLE_USER_TURN"):  # fmt: skip
        assert categories[category] >= 2, category
    tags = Counter(t for s in BUILTIN for t in s.tags)
    assert tags["permission_error"] >= 8 and tags["datetime"] >= 12
    for split in ("train", "test"):
        assert any("permission_error" in s.tags for s in builtin_scenarios(split))
        assert any("datetime" in s.tags for s in builtin_scenarios(split))


@pytest.mark.parametrize("name", [s.name for s in BUILTIN])
def test_oracle_solves_and_dropping_the_last_action_does_not(name: str) -> None:
    env = gym.make("trace/device-v0", scenario=name).unwrapped
    assert isinstance(env, DeviceEnv)
    _, info = env.reset(seed=0)
    assert info["scenario"] == name
    assert {t["function"]["name"] for t in info["tools"]} == set(env.scenario.tools)  # type: ignore[union-attr]
    oracle = env.oracle_actions()
    assert play(env, oracle) == 1.0
    verdict = env.verify()
    assert verdict.success and verdict.components["similarity"] == 1.0
    env.reset(seed=0)
    assert play(env, oracle[:-1]) < 1.0
    assert not env.verify().success


def test_permission_scenario_shows_the_error_then_recovers() -> None:
    env = DeviceEnv(scenario="turn_on_wifi_low_battery")
    env.reset(seed=0)
    observation, *_ = env.step(env.oracle_actions()[0])
    assert observation == "PermissionError: Wifi cannot be turned on in low battery mode"
    assert env.sandbox[-1].tool_call_exception == observation


def test_unknown_tool_zeroes_the_score_by_default() -> None:
    env = DeviceEnv(scenario="remind_chocolate_milk_tomorrow")
    env.reset(seed=0)
    observation, *_ = env.step('{"name": "teleport", "arguments": {}}')
    assert observation.startswith("KeyError:")
    assert play(env, env.oracle_actions()) == 0.0
    lenient = DeviceEnv(scenario="remind_chocolate_milk_tomorrow", zero_on_unknown_tool=False)
    lenient.reset(seed=0)
    lenient.step('{"name": "teleport", "arguments": {}}')
    assert play(lenient, lenient.oracle_actions()) == 1.0


def test_scenarios_round_trip_through_json_and_yaml(tmp_path: Path) -> None:
    sample = [BUILTIN[0], BUILTIN[13], BUILTIN[-1]]
    for suffix in (".json", ".yaml"):
        path = tmp_path / f"scenarios{suffix}"
        dump_scenarios(sample, path)
        loaded = load_scenarios(path)
        assert [s.model_dump(mode="json") for s in loaded] == [s.model_dump(mode="json") for s in sample]
    single = tmp_path / "one.yaml"
    single.write_text(BUILTIN[0].to_yaml())
    assert DeviceScenario.from_file(single).name == BUILTIN[0].name
    env = DeviceEnv(scenarios=load_scenarios(tmp_path / "scenarios.yaml"))
    env.reset(seed=1)
    assert play(env, env.oracle_actions()) == 1.0


def test_bad_scenario_files_name_the_problem(tmp_path: Path) -> None:
    data = json.loads(BUILTIN[0].to_json())
    data["tools"] = ["set_wifi_status", "warp_drive"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="warp_drive"):
        load_scenarios(path)
    data = json.loads(BUILTIN[0].to_json())
    data["world"] = data.pop("base") and {"SETTING": []}
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="scenario #0"):
        load_scenarios(path)
    with pytest.raises(ValueError, match=r"\.json, \.yaml or \.yml"):
        load_scenarios(tmp_path / "scenarios.txt")


def test_generator_is_deterministic_and_diverse() -> None:
    first = [generate_scenario(random.Random(seed)).to_json() for seed in range(25)]
    again = [generate_scenario(random.Random(seed)).to_json() for seed in range(25)]
    assert first == again
    assert len(set(first)) == 25
    kinds = {json.loads(text)["name"] for text in [generate_scenario(random.Random(s)).to_json() for s in range(120)]}
    assert {"generated_permission_turn_on", "generated_reminder_at", "generated_days_until_holiday"} <= kinds
    assert any(k.startswith("generated_cannot") for k in kinds)


def test_generated_scenarios_are_solved_by_their_reference() -> None:
    scenarios = [generate_scenario(random.Random(seed)) for seed in range(40)]
    scores = score_scenarios(scenarios)
    assert all(s.similarity == 1.0 for s in scores), [s for s in scores if s.similarity != 1.0]


def test_metrics() -> None:
    assert mean_similarity([1.0, 0.5, 0.0]) == 0.5
    assert perfect_count([1.0, 0.999, 1.0]) == 2
    assert mean_similarity([]) == 0.0
    scores = score_scenarios(BUILTIN[:6], actions=lambda env: env.oracle_actions()[:-1])
    summary = summarize(scores)
    assert summary.count == 6 and summary.perfect_count == 0 and 0 < summary.mean_similarity < 1
    assert summary.per_category["ALL_CATEGORIES"].count == 6
    assert summary.per_category["STATE_DEPENDENCY"].count == 6
