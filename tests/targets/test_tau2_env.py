"""trace/tau2-retail-v0 and trace/tau2-airline-v0: tasks as episodes with an LLM user (deterministic fakes here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import trace_envs  # noqa: F401 - registers the env ids
from trace_envs.targets.tau2 import DATA_ENV_VAR, GREETING, Tau2DataError, load_domain_data
from trace_envs.targets.tau2.env import Tau2RetailEnv, agent_system_prompt

from .fake_models import ScriptedUserModel


@pytest.fixture
def tau2_dir(shared_data: Path) -> Path:
    return shared_data / "tau2"


def make(tau2_dir: Path, lines: list[str] | None = None, **kwargs: Any) -> Tau2RetailEnv:
    user = ScriptedUserModel(lines or ["I want to exchange items of my order.", "Yes, please go ahead."])
    env = gym.make("trace/tau2-retail-v0", data_dir=str(tau2_dir), user_model=user, **kwargs)
    return env.unwrapped  # type: ignore[return-value]


def test_gold_episode_scores_one_and_reset_is_exact(tau2_dir: Path) -> None:
    env = make(tau2_dir, task_id="0")
    observation, info = env.reset(seed=0)
    assert observation == "I want to exchange items of my order."
    assert info["task_id"] == "0" and info["reward_basis"] == ["DB", "COMMUNICATE"]
    assert info["messages"][1] == {"role": "assistant", "content": GREETING}
    initial = env.domain.state_hash(env.db)
    for action in env.task.gold_actions:  # type: ignore[union-attr]
        call = {"name": action.name, "arguments": action.arguments}
        observation, reward, terminated, truncated, _ = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
        assert not terminated and not truncated and reward == 0.0
    assert env.db.dirty
    _, reward, terminated, _, info = env.step("Your exchange is requested. Anything else?")
    assert not terminated
    _, reward, terminated, _, info = env.step("Goodbye!")
    assert terminated and reward == 1.0 and info["ended"] == "user_stop"
    assert info["verdict"]["components"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert info["verdict"]["hash_match"] is True and info["verdict"]["details"]["db_match"] is True
    env.reset(seed=0)
    assert env.domain.state_hash(env.db) == initial and not env.db.dirty


def test_wrong_episode_scores_zero(tau2_dir: Path) -> None:
    env = make(tau2_dir, task_id="0", max_turns=3)
    env.reset(seed=1)
    env.step('{"name": "get_order_details", "arguments": {"order_id": "#W2378156"}}')
    _, reward, terminated, _, info = env.step("Done.")
    _, reward, terminated, truncated, info = env.step("Bye.")
    assert terminated or truncated
    assert reward == 0.0 and info["verdict"]["components"]["DB"] == 0.0


TAU2_AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n"
    "- Send a message to the user.\n"
    "- Make a tool call.\n"
    "You cannot do both at the same time.\n"
    "\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)
"""tau2-bench's LLM agent instruction, word for word (``templates/prompts/tau2_agent_instruction.jinja``)."""


def test_prompts_are_tau2s(tau2_dir: Path) -> None:
    env = make(tau2_dir, task_id="5")
    _, info = env.reset(seed=0)
    policy = (tau2_dir / "retail" / "policy.md").read_text(encoding="utf-8")
    expected = f"<instructions>\n{TAU2_AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"
    assert info["messages"][0]["content"] == agent_system_prompt(policy) == expected
    assert agent_system_prompt(policy).endswith("\n\n</policy>")  # retail policy.md ends with a newline
    user_model: ScriptedUserModel = env.user_model  # type: ignore[assignment]
    system = user_model.requests[0][0]["content"]
    guidelines = (tau2_dir / "user_simulator" / "simulation_guidelines.md").read_text(encoding="utf-8")
    assert system.startswith(guidelines + "\n\n<scenario>\nInstructions:\n\tDomain: retail\n\tReason for call:\n\t\t")
    assert system.endswith("\n</scenario>")
    assert user_model.requests[0][1:] == [{"role": "user", "content": GREETING}]
    assert [t["function"]["name"] for t in info["tools"]] == list(env.toolset)


def test_bad_actions_are_observations_and_errors_end_the_episode(tau2_dir: Path) -> None:
    env = make(tau2_dir, task_id="1", max_errors=2)
    env.reset(seed=0)
    observation, *_ = env.step('{"name": "get_user_details", "arguments": {}}')
    assert observation == "Error: RetailTools.get_user_details() missing 1 required positional argument: 'user_id'"
    observation, reward, terminated, _, info = env.step('{"name": "nope", "arguments": {}}')
    assert observation == "Error: Tool 'nope' not found."
    assert terminated and reward == 0.0 and info["ended"] == "too_many_errors"


def test_seed_picks_a_task_from_the_split(tau2_dir: Path) -> None:
    env = make(tau2_dir, split="test")
    ids = {env.reset(seed=seed)[1]["task_id"] for seed in range(6)}
    test_ids = set(load_domain_data(tau2_dir, "retail").task_ids("test"))
    assert ids <= test_ids and len(ids) > 1
    assert env.reset(seed=3)[1]["task_id"] == env.reset(seed=3)[1]["task_id"]


def test_gymnasium_env_checker(tau2_dir: Path) -> None:
    check_env(make(tau2_dir, task_id="2"), skip_render_check=True)


def test_clear_errors_for_missing_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tau2_dir: Path) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    with pytest.raises(Tau2DataError, match=DATA_ENV_VAR):
        load_domain_data(None, "retail")
    (tmp_path / "retail").mkdir()
    (tmp_path / "retail" / "tasks.json").write_text("[]")
    with pytest.raises(Tau2DataError, match=r"lacks db\.json"):
        load_domain_data(tmp_path, "retail")
    monkeypatch.setenv(DATA_ENV_VAR, str(tau2_dir))
    assert load_domain_data(None, "retail").path == tau2_dir / "retail"
    with pytest.raises(ValueError, match="judge_model"):
        make(tau2_dir, reward_basis="task")
    with pytest.raises(ValueError, match="needs a user model"):
        gym.make("trace/tau2-retail-v0", data_dir=str(tau2_dir)).reset(seed=0)


def test_airline_env_runs(tau2_dir: Path) -> None:
    pytest.importorskip("trace_envs.domains.airline")
    env = gym.make("trace/tau2-airline-v0", data_dir=str(tau2_dir), task_id="1", user_model=ScriptedUserModel(["Hi."]))
    observation, info = env.reset(seed=0)
    assert observation == "Hi." and len(info["tools"]) == 14
