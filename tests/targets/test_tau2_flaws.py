"""Scripted oracle and flawed policies on tau2 target tasks (deficits applied to the gold actions)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_envs.core import ToolCall
from trace_envs.llm import ChatResponse, Usage
from trace_envs.rollout import EpisodeJob, EpisodeRecord, make_policy, run_episode, run_rollouts
from trace_envs.targets.tau2.flaws import (
    near_miss_argument,
    skip_lookups_before_write,
    stop_after_first_write,
    tau2_actions,
    tau2_deficits,
)

WRITES = {"cancel_order", "modify_address"}
STATE = {
    "orders": {
        "#W1": {"order_id": "#W1", "user_id": "ava_1", "items": ["111", "222"], "total": 10.5},
        "#W2": {"order_id": "#W2", "user_id": "ava_1", "items": ["333"], "total": 7.25},
        "#W3": {"order_id": "#W3", "user_id": "noah_2", "items": ["444"], "total": 3.0},
    },
    "users": {"ava_1": {"name": "Ava"}, "noah_2": {"name": "Noah"}},
}
CALLS = [
    ToolCall(name="find_user", arguments={"name": "Ava"}),
    ToolCall(name="get_order", arguments={"order_id": "#W1"}),
    ToolCall(name="cancel_order", arguments={"order_id": "#W1", "reason": "no longer needed"}),
    ToolCall(name="get_order", arguments={"order_id": "#W2"}),
    ToolCall(name="modify_address", arguments={"order_id": "#W2"}),
]


def is_write(name: str) -> bool:
    return name in WRITES


def test_skip_lookups_and_stop_after_first_write() -> None:
    assert [c.name for c in skip_lookups_before_write(CALLS, is_write)] == [
        "cancel_order",
        "get_order",
        "modify_address",
    ]
    assert [c.name for c in stop_after_first_write(CALLS, is_write)] == ["find_user", "get_order", "cancel_order"]
    reads = CALLS[:2]
    assert skip_lookups_before_write(reads, is_write) == reads and stop_after_first_write(reads, is_write) == reads


@given(seed=st.integers(0, 2**32))
def test_near_miss_swaps_one_argument_of_the_first_write_for_a_state_value(seed: int) -> None:
    changed = near_miss_argument(CALLS, is_write, STATE, random.Random(seed))
    diffs = [(a, b) for a, b in zip(CALLS, changed, strict=True) if a != b]
    assert len(diffs) == 1
    before, after = diffs[0]
    assert before.name == "cancel_order"
    assert after.arguments["order_id"] in {"#W2", "#W3"}  # another order id from the state
    assert after.arguments["reason"] == before.arguments["reason"]


def test_near_miss_in_list_arguments_and_nothing_to_swap() -> None:
    calls = [ToolCall(name="modify_address", arguments={"items": ["222"]})]
    (changed,) = near_miss_argument(calls, is_write, STATE, random.Random(0))
    assert changed.arguments["items"][0] in {"111", "333", "444"}
    lonely = [ToolCall(name="cancel_order", arguments={"order_id": "#W9"})]
    assert near_miss_argument(lonely, is_write, STATE, random.Random(0)) == lonely


PASSENGER_STATE = {
    "reservations": {
        "R1": {"passengers": [{"first_name": "Ava", "dob": "1990-01-01"}, {"first_name": "Noah", "dob": "1985-05-05"}]},
        "R2": {"passengers": [{"first_name": "Mia", "dob": "1970-07-07"}]},
    }
}


@given(seed=st.integers(0, 2**32))
def test_near_miss_swaps_one_scalar_inside_a_list_of_dicts(seed: int) -> None:
    """Airline's ``passengers``/``flights`` arguments are lists of dicts: one leaf is swapped, the shape kept."""
    passengers = [{"first_name": "Ava", "dob": "1990-01-01"}, {"first_name": "Noah", "dob": "1985-05-05"}]
    calls = [ToolCall(name="modify_address", arguments={"passengers": passengers, "reservation_id": "R1"})]
    (changed,) = near_miss_argument(calls, is_write, PASSENGER_STATE, random.Random(seed))
    after = changed.arguments["passengers"]
    assert changed.arguments["reservation_id"] == "R1" and after[1] == passengers[1]
    assert after[0]["first_name"] == "Ava"  # keys are searched in sorted order: ``dob`` comes first
    assert after[0]["dob"] in {"1985-05-05", "1970-07-07"}
    nested = [ToolCall(name="modify_address", arguments={"passengers": [{"unknown": {"deep": ["x"]}}], "flag": True})]
    assert near_miss_argument(nested, is_write, PASSENGER_STATE, random.Random(seed)) == nested


class CustomerModel:
    """A deterministic stand-in for the user LLM: asks for help, then thanks and stops."""

    spec = "fake:customer"

    def chat(self, messages: list[dict[str, Any]], tools: Any = None, **sampling: Any) -> ChatResponse:
        turns = sum(m["role"] == "user" for m in messages)
        text = "I need help with my order." if turns <= 1 else "Thanks! ###STOP###"
        return ChatResponse(content=text, usage=Usage(input_tokens=len(messages), output_tokens=len(text.split())))

    async def achat(self, messages: list[dict[str, Any]], tools: Any = None, **sampling: Any) -> ChatResponse:
        return self.chat(messages, tools, **sampling)


class TaskChoice(gym.Wrapper):  # type: ignore[type-arg]
    """Resets the wrapped tau2 target env on ``self.task_id`` (one loaded database for many tasks)."""

    task_id = "0"

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return self.env.reset(seed=seed, options={**(options or {}), "task_id": self.task_id})


def tau2_env(shared_data: Path, domain: str) -> TaskChoice:
    pytest.importorskip(f"trace_envs.domains.{domain}")
    env = gym.make(
        f"trace/tau2-{domain}-v0",
        data_dir=str(shared_data / "tau2"),
        user_model=CustomerModel(),
        disable_env_checker=True,
    )
    return TaskChoice(env)


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_every_flaw_rule_plays_every_task(shared_data: Path, domain: str) -> None:
    """Each deficit rule, on every task of the domain, yields a finished, scored trajectory (no exception)."""
    env = tau2_env(shared_data, domain)
    tasks = env.unwrapped.data.tasks  # type: ignore[attr-defined]
    deficits = tau2_deficits()
    failing: dict[str, int] = dict.fromkeys(deficits, 0)
    for task in tasks:
        env.task_id = task.id
        for capability in deficits:
            record = run_episode(env, make_policy(f"flawed:{capability}"), env_id=domain, seed=0)
            assert record.error is None, (task.id, capability, record.error)
            assert record.task_id == task.id and record.ended in ("user_stop", "agent_stop")
            assert record.verdict["details"]["task_id"] == task.id and record.messages[-1]["content"].endswith(
                "###STOP###"
            )
            assert len(record.tool_calls) <= len(task.gold_actions)
            failing[capability] += not record.success
    env.close()
    # the rules bite: state-changing deficits fail tasks (skipping lookups alone changes no state)
    assert failing["multi_step_task_completion"] > 0 and failing["tool_calling_precision"] > 0
    assert failing["precondition_verification"] == 0


def test_near_miss_on_airline_task_40_passengers(shared_data: Path) -> None:
    """Regression: task 40's only write takes ``passengers`` (a list of dicts); the rule crashed with
    ``TypeError: unhashable type: 'dict'`` and the episode was lost."""
    env = tau2_env(shared_data, "airline")
    env.task_id = "40"
    record = run_episode(env, make_policy("flawed:tool_calling_precision"), env_id="airline", seed=0)
    assert record.error is None and record.ended in ("user_stop", "agent_stop")
    gold = {a.name: a.arguments for a in env.unwrapped.task.gold_actions}  # type: ignore[attr-defined]
    (write,) = [c for c in record.tool_calls if c.name == "update_reservation_passengers"]
    assert write.arguments["reservation_id"] == gold["update_reservation_passengers"]["reservation_id"]
    pairs = zip(write.arguments["passengers"], gold["update_reservation_passengers"]["passengers"], strict=True)
    changed = [(key, a[key], b[key]) for a, b in pairs for key in b if a[key] != b[key]]
    assert len(changed) == 1  # exactly one scalar differs
    assert record.reward == 0.0 and record.components["DB"] == 0.0
    # the index kept per env gives the same actions as a freshly loaded database
    inner: Any = env.unwrapped
    state = inner.domain.dump_state(inner.domain.load_file(inner.data.db_path))
    fresh = tau2_actions(inner.task, inner.toolset.mutates, state, ["tool_calling_precision"])
    assert record.actions == fresh[: len(record.actions)] and len(record.actions) >= 3
    env.close()


def rollout(shared_data: Path, policy: str, task_ids: list[str]) -> dict[str, EpisodeRecord]:
    jobs = [
        EpisodeJob(
            env_id="trace/tau2-retail-v0", seed=0, env_kwargs={"data_dir": str(shared_data / "tau2"), "task_id": t}
        )
        for t in task_ids
    ]
    records: list[EpisodeRecord] = []
    summary = run_rollouts(jobs, policy, user_model=CustomerModel(), on_episode=records.append, concurrency=2)  # type: ignore[arg-type]
    assert summary.failed == 0, [r.error for r in records]
    return {r.task_id or "": r for r in records}


def test_oracle_and_flawed_policies_on_retail_tasks(shared_data: Path) -> None:
    pytest.importorskip("trace_envs.domains.retail")
    oracle = rollout(shared_data, "oracle", ["0", "11"])
    assert all(r.reward == 1.0 and r.success for r in oracle.values())
    assert oracle["0"].user_model == "fake:customer"
    # the user's tokens are attributed to each episode: 2 requests (opening, final reply)
    assert all(r.user_usage.output_tokens == 8 for r in oracle.values())

    # stop after the first write: task 11 needs two writes, so its database ends up wrong
    multi = rollout(shared_data, "flawed:multi_step_task_completion", ["11"])["11"]
    assert multi.reward == 0.0 and multi.components["DB"] == 0.0
    assert len(multi.tool_calls) == len(oracle["11"].tool_calls) - 1

    # a near-miss argument in the write: the wrong record changes (or the call fails)
    precise = rollout(shared_data, "flawed:tool_calling_precision", ["0"])["0"]
    assert precise.reward == 0.0
    assert [c.name for c in precise.tool_calls] == [c.name for c in oracle["0"].tool_calls]
    assert [c.arguments for c in precise.tool_calls] != [c.arguments for c in oracle["0"].tool_calls]

    # skip the lookups: only the write is made (reads change no state, so DB+COMMUNICATE still pass)
    hasty = rollout(shared_data, "flawed:precondition_verification", ["0"])["0"]
    assert [c.name for c in hasty.tool_calls] == [oracle["0"].tool_calls[-1].name]

    # a capability without a rule on tau2 plays the oracle
    other = rollout(shared_data, "flawed:datetime_reasoning", ["11"])["11"]
    assert other.actions == oracle["11"].actions


def test_plain_flawed_on_a_target_task_names_the_deficits_to_pick(shared_data: Path) -> None:
    """A tau2 task has no capability of its own, so plain ``flawed`` fails the episode and says why."""
    pytest.importorskip("trace_envs.domains.retail")
    job = EpisodeJob(
        env_id="trace/tau2-retail-v0", seed=0, env_kwargs={"data_dir": str(shared_data / "tau2"), "task_id": "0"}
    )
    records: list[EpisodeRecord] = []
    summary = run_rollouts([job], "flawed", user_model=CustomerModel(), on_episode=records.append)  # type: ignore[arg-type]
    assert summary.failed == 1
    assert records[0].error is not None and "flawed:<capability>" in records[0].error.splitlines()[0]


def test_reset_options_choose_the_task_on_one_shared_env(shared_data: Path) -> None:
    """Jobs that differ only in ``reset_options`` share one env (one database load) and play their own task."""
    pytest.importorskip("trace_envs.domains.retail")
    kwargs = {"data_dir": str(shared_data / "tau2")}
    jobs = [
        EpisodeJob(env_id="trace/tau2-retail-v0", seed=i, env_kwargs=kwargs, reset_options={"task_id": t})
        for i, t in enumerate(["0", "11", "5"])
    ]
    records: list[EpisodeRecord] = []
    summary = run_rollouts(jobs, "oracle", user_model=CustomerModel(), on_episode=records.append, concurrency=1)  # type: ignore[arg-type]
    assert summary.failed == 0 and summary.successes == 3
    assert [r.task_id for r in sorted(records, key=lambda r: r.seed)] == ["0", "11", "5"]
    assert all(r.metadata["reset_options"] == {"task_id": r.task_id} for r in records)
