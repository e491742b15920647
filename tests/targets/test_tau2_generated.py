"""tau2 tasks on generated databases (the demo's stand-in targets) and the scripted customer that plays them."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401 - registers the target env ids
from trace_envs.rollout import make_policy, run_episode
from trace_envs.targets.tau2 import load_domain_data
from trace_envs.targets.tau2.generated import write_generated_domain
from trace_envs.targets.tau2.scripted_user import ScriptedCustomer, first_person


@pytest.fixture(scope="module", params=["retail", "airline"])
def generated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_generated_domain(tmp_path_factory.mktemp("gen"), request.param, seed=0)


def _play(folder: Path, task_id: str, policy: str) -> bool:
    env = gym.make(
        f"trace/tau2-{folder.name}-v0", data_dir=str(folder), task_id=task_id, user_model=ScriptedCustomer(),
        disable_env_checker=True,
    )  # fmt: skip
    return run_episode(env, make_policy(policy), env_id=folder.name, seed=0).success


def test_every_generated_task_is_solved_by_its_gold_actions_and_multi_step_fails_the_two_write_ones(
    generated: Path,
) -> None:
    data = load_domain_data(generated, generated.name)
    writes = {t.id: sum(a.name.startswith("cancel_") for a in t.gold_actions) for t in data.tasks}
    assert sorted(set(writes.values())) == [0, 1, 2]
    for task_id, count in writes.items():
        assert _play(generated, task_id, "oracle"), f"gold actions of task {task_id} did not pass"
        assert _play(generated, task_id, "flawed:multi_step_task_completion") == (count < 2), task_id


def test_the_same_seed_writes_the_same_folder(generated: Path, tmp_path: Path) -> None:
    again = write_generated_domain(tmp_path, generated.name, seed=0)
    for name in ("db.json", "tasks.json", "policy.md"):
        assert (again / name).read_bytes() == (generated / name).read_bytes()
    other = write_generated_domain(tmp_path / "other", generated.name, seed=1)
    assert json.loads((other / "tasks.json").read_text()) != json.loads((generated / "tasks.json").read_text())


def test_the_scripted_customer_opens_with_the_request_and_then_stops() -> None:
    customer = ScriptedCustomer()
    prompt = (
        "G\n<scenario>\n\tReason for call:\n\t\tYou want your order #W1 cancelled.\n\tKnown info:\n\t\tYou are Ann.\n"
    )
    opening = customer.chat([{"role": "system", "content": prompt}, {"role": "user", "content": "Hi"}]).content
    assert opening == "Hi! I want my order #W1 cancelled. I am Ann."
    reply = customer.chat([{"role": "assistant", "content": opening}, {"role": "user", "content": "Done."}]).content
    assert reply is not None and reply.endswith("###STOP###")
    assert first_person("Your email is x; you are Bo.") == "My email is x; I am Bo."


def test_an_unknown_domain_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no generator for tau2 domain 'mock'"):
        write_generated_domain(tmp_path, "mock")
