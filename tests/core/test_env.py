"""CapabilityEnv's contract on the shipped starter env: seeding, turns, endings, errors, verdicts."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.core import STOP_TOKEN, CapabilityEnv, Verdict
from trace_envs.rollout import play_actions

ENV_ID = "trace/order-cancel-v0"


def make(**kwargs: object) -> CapabilityEnv:
    env = gym.make(ENV_ID, **kwargs).unwrapped
    assert isinstance(env, CapabilityEnv)
    return env


def test_import_registers_and_make_accepts_a_seed() -> None:
    assert ENV_ID in trace_envs.list_envs()
    first, _ = gym.make(ENV_ID, seed=3).reset()
    second, _ = gym.make(ENV_ID).reset(seed=3)
    assert first == second
    assert first != gym.make(ENV_ID).reset(seed=4)[0]


def test_module_prefixed_id_works() -> None:
    assert gym.make("trace_envs:" + ENV_ID, seed=1).reset()[0]


def test_reset_info_holds_tools_policy_task_and_messages() -> None:
    env = make()
    observation, info = env.reset(seed=5)
    assert info["seed"] == 5
    assert info["task_id"] == "precondition_verification-5"
    assert info["capability"] == "precondition_verification"
    assert [t["function"]["name"] for t in info["tools"]] == ["get_order_details", "cancel_order"]
    assert "pending" in info["policy"]
    assert [m["role"] for m in info["messages"]] == ["system", "user"]
    assert info["messages"][0]["content"].startswith("<instructions>\nYou are a customer service agent")
    assert info["messages"][1]["content"] == observation


def test_unseeded_resets_follow_the_first_seed() -> None:
    a, b = make(), make()
    a.reset(seed=11)
    b.reset(seed=11)
    assert a.reset()[0] == b.reset()[0]


def test_oracle_solves_and_the_verdict_explains_itself() -> None:
    env = make()
    env.reset(seed=2)
    reward, info = play_actions(env, env.oracle_actions(), seed=2)
    verdict = Verdict.model_validate(info["verdict"])
    assert reward == 1.0
    assert verdict.success and verdict.hash_match
    assert verdict.state_hash == verdict.gold_hash
    assert all(verdict.facts_told.values())
    assert verdict.components == {"db": 1.0, "communicate": 1.0}
    assert info["ended"] == "user_stop"


def test_a_missing_fact_or_a_wrong_write_fails_with_the_reason() -> None:
    env = make()
    env.reset(seed=0)  # an ineligible order
    assert env.task is not None and not env.task.metadata["eligible"]
    reward, info = play_actions(env, env.flawed_actions() or [], seed=0)
    assert reward == 0.0
    assert not info["verdict"]["hash_match"]
    env.reset(seed=0)
    reward, info = play_actions(env, [*env.oracle_actions()[:1], "All done."], seed=0)
    assert reward == 0.0
    assert info["verdict"]["hash_match"] and not all(info["verdict"]["facts_told"].values())


def test_malformed_actions_are_error_observations_and_count_as_turns() -> None:
    env = make()
    env.reset(seed=1)
    observation, reward, terminated, truncated, info = env.step("<tool_call>{oops}</tool_call>")
    assert observation.startswith("Error: invalid tool call: tool call is not valid JSON")
    assert (reward, terminated, truncated, env.turn) == (0.0, False, False, 1)
    assert info["messages"][-1] == {"role": "user", "content": observation, "error": True}
    observation, *_ = env.step('{"name": "get_order_details", "arguments": {"order": "#W1"}}')
    assert "unexpected argument(s) 'order'" in observation
    observation, *_ = env.step({"name": "fly", "arguments": {}})
    assert observation.startswith("Error: Tool 'fly' not found.")
    assert env.turn == 3


def test_truncation_scores_zero_even_when_the_state_is_right() -> None:
    env = make()
    env.reset(seed=1)
    actions = env.oracle_actions()[:-1] + ['{"name": "get_order_details", "arguments": {"order_id": "x"}}'] * 20
    reward, info = play_actions(env, actions, seed=1)
    assert info["ended"] == "max_turns"
    assert reward == 0.0
    assert env.turn == env.max_turns


def test_the_agent_can_end_the_conversation() -> None:
    env = make()
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step(STOP_TOKEN)
    assert terminated and not truncated
    assert info["ended"] == "agent_stop"
    observation, reward, terminated, _, _ = env.step("hello?")
    assert terminated and reward == 0.0
    assert observation.startswith("Error: the episode has ended")


def test_step_before_reset_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        make().step("hi")


def test_knobs_are_validated_with_a_clear_message() -> None:
    assert len(make(distractor_orders=0).reset(seed=0)[1]["tools"]) == 2
    with pytest.raises(ValueError, match="distractor_orders"):
        make(distractor_orders=-1)
    with pytest.raises(ValueError, match="colour"):
        make(colour="red")
    with pytest.raises(ValueError, match="render_mode"):
        make(render_mode="rgb_array")


def test_render_ansi_is_a_readable_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    env = make(render_mode="ansi")
    env.reset(seed=2)
    for action in env.oracle_actions():
        env.step(action)
    text = env.render()
    assert text is not None
    assert text.splitlines()[0].startswith("user: Hi, I'm")
    assert 'assistant → {"name": "get_order_details"' in text
    human = make(render_mode="human")
    human.reset(seed=2)
    human.step("Can I have your order id?")
    assert "assistant: Can I have your order id?" in capsys.readouterr().out


def test_gold_hash_is_replayed_once_per_seed_and_knobs(monkeypatch: pytest.MonkeyPatch) -> None:
    make().clear_gold_cache()
    calls: list[int] = []
    original = CapabilityEnv.replay_reference

    def counting(self: CapabilityEnv) -> str:
        calls.append(int(self.task_seed or 0))
        return original(self)

    monkeypatch.setattr(CapabilityEnv, "replay_reference", counting)
    first, second, other_knobs = make(), make(), make(distractor_orders=7)
    for env in (first, second, first):
        env.reset(seed=4)
        env.gold_hash()
    other_knobs.reset(seed=4)
    assert other_knobs.gold_hash() != first.gold_hash()
    assert calls == [4, 4]


def test_facts_match_like_tau2_but_numbers_only_as_whole_numbers() -> None:
    from trace_envs.core import fact_pattern, normalize_fact_text

    said = normalize_fact_text("Your refund of $1,234.50 is on its way; it took 85 days, not 850.")
    assert fact_pattern("1234.50").search(said)
    assert fact_pattern("Refund").search(said)
    assert fact_pattern("85 days").search(said)
    assert not fact_pattern("34.5").search(said)
    assert not fact_pattern("5 days").search(said)
    assert not fact_pattern("23 day").search("it is -823 days away")


def test_reference_steps_listed_as_expected_errors_must_fail() -> None:
    env = make()
    env.reset(seed=1)
    assert env.task is not None
    failing = env.task.model_copy(update={"expected_errors": [0]})
    env.task = failing
    with pytest.raises(
        RuntimeError, match=r"step 0 \(get_order_details with \{.*\}\) should fail but succeeded on seed \d+"
    ):
        env.replay_reference()


def test_text_of_a_malformed_tool_call_never_reaches_the_user() -> None:
    env = make()
    env.reset(seed=0)  # the fact to tell is the order's status
    assert env.task is not None
    fact = env.task.required_facts[0]
    _, _, _, _, info = env.step(f'<tool_call>{{"name": "get_order_details"}} the order is {fact}')
    assert info["messages"][0]["invalid"] is True
    assert env.facts_told() == {fact: False}


def test_required_facts_count_only_once_the_required_reads_succeeded() -> None:
    from trace_envs.core import ToolCall, format_tool_call

    env = make()
    env.reset(seed=0)  # an ineligible order: the oracle looks it up, then tells its status
    assert env.task is not None
    read = ToolCall(name="get_order_details", arguments={"order_id": env.task.metadata["order_id"]})
    status = env.task.metadata["status"]
    task = env.task.model_copy(update={"required_reads": [read]})

    def play(actions: list[str]) -> dict[str, object]:
        env.reset(seed=0)
        env.task = task  # play the steps by hand: play_actions would reset to the unpatched task
        queue = [*actions, STOP_TOKEN]
        while True:
            _, _, terminated, truncated, info = env.step(queue.pop(0))
            if terminated or truncated:
                return dict(info["verdict"])

    key = format_tool_call(read)
    told = f"Your order is already {status}, so it cannot be cancelled; shall I look it up?"
    wrong_read = format_tool_call(ToolCall(name="get_order_details", arguments={"order_id": "#W0"}))
    before = play([told, format_tool_call(read)])
    assert before["reads_done"] == {key: True} and before["facts_told"] == {status: False}
    assert not before["success"]
    failed = play([wrong_read, f"Your order is already {status}."])
    assert failed["reads_done"] == {key: False} and not failed["success"]
    after = play([format_tool_call(read), f"Your order is already {status}, so it cannot be cancelled."])
    assert after["success"] and after["reads_done"] == {key: True} and after["facts_told"] == {status: True}
