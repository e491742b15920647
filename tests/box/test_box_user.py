"""A boxed env's user played by a chat model: the model stays in this process (the box has no network), the box
asks for each user line over the protocol, and can make this process do nothing else."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import pytest

from trace_envs.box import BoxedEnv, BoxLimits, BoxPool, BoxProtocolError, boxed_env_class
from trace_envs.core import CapabilityEnv
from trace_envs.llm import ChatResponse, Usage
from trace_envs.llm_user import LLMUser
from trace_envs.registry import box_installed_env
from trace_envs.rollout.scripted import play_actions

from .conftest import GOOD, with_payload

OPENING_CUE = "You start the conversation with a request like: "


class EchoUserModel:
    """A deterministic user model: the opening request of its scenario, then a reply naming the agent's words;
    it stops on its fourth line. Records every request (and can take ``delay`` seconds per call)."""

    def __init__(self, delay: float = 0.0):
        self.requests: list[list[dict[str, Any]]] = []
        self.delay = delay

    def chat(self, messages: list[dict[str, Any]], **sampling: Any) -> ChatResponse:
        self.requests.append([dict(m) for m in messages])
        time.sleep(self.delay)
        spoken = sum(1 for m in messages if m["role"] == "assistant")
        usage = Usage(input_tokens=len(messages), output_tokens=1)
        if spoken == 0:
            system = str(messages[0]["content"])
            opening = system.partition(OPENING_CUE)[2].splitlines()[0] if OPENING_CUE in system else "Hello."
            return ChatResponse(content=opening, usage=usage)
        heard = str(messages[-1]["content"])[:60]
        stop = " ###STOP###" if spoken >= 3 else ""
        return ChatResponse(content=f"Line {spoken}: you said {heard!r}.{stop}", usage=usage)


def episode(env: Any, seed: int) -> tuple[list[Any], float]:
    """Reset with ``seed`` and play the oracle's actions; the messages and the reward."""
    env.reset(seed=seed)
    reward, _ = play_actions(env, env.oracle_actions(), seed=seed)
    return list(env.messages), float(reward)


@pytest.mark.parametrize("env_id", ["trace/order-cancel-v0", "trace/retail-order-cancel-v0"])
def test_a_boxed_episode_with_a_model_user_equals_the_in_process_one(env_id: str, clean_ids: list[str]) -> None:
    boxed_id = box_installed_env(env_id)
    clean_ids.append(boxed_id)
    ours_model, theirs_model = EchoUserModel(), EchoUserModel()
    ours = gym.make(boxed_id, user_model=ours_model).unwrapped
    theirs = gym.make(env_id, user_model=theirs_model).unwrapped
    assert isinstance(ours, BoxedEnv) and isinstance(theirs, CapabilityEnv) and ours.user_model is ours_model
    for seed in (0, 5):
        assert episode(ours, seed) == episode(theirs, seed)
        assert isinstance(ours.user, LLMUser) and isinstance(theirs.user, LLMUser)
        assert ours.user.usage == theirs.user.usage  # the usage a rollout records is read from here
    assert ours_model.requests == theirs_model.requests and len(ours_model.requests) >= 4
    assert str(ours.messages[1]["content"]) in str(ours_model.requests[-1][0]["content"])  # the task's scenario
    ours.reset(seed=0)
    ours.user_model = None  # the next reset's user is the scripted one again, from the same box
    assert episode(ours, 0) == episode(gym.make(env_id).unwrapped, 0)
    ours.close()


def boxed(source: str, pool: BoxPool, user_model: Any) -> BoxedEnv:
    box = pool.acquire(source, {})
    pool.release(box, source, {})
    return boxed_env_class(source, box.ready, pool=pool)(user_model=user_model)


def test_the_models_time_is_not_the_boxs_but_a_box_that_never_answers_still_times_out() -> None:
    hanging = with_payload("if action == 'hang':\n    while True:\n        pass", at="step")
    with BoxPool(BoxLimits(step_seconds=1.5)) as pool:
        env = boxed(hanging, pool, EchoUserModel(delay=1.0))
        env.reset(seed=0)  # the opening: a 1 s model call
        observation, _, terminated, _, info = env.step("Could you tell me your order id?")  # 1 s more
        assert not terminated and "box_error" not in info and observation.startswith("Line 1")
        start = time.monotonic()
        info = env.step("hang")[4]
        assert "did not answer within 1.5 s (BoxLimits.step_seconds) during step" in info["box_error"]
        assert time.monotonic() - start < 10


UNASKED = (
    'import os, sys\nos.write(int(sys.argv[2]), b\'{"kind": "user_turn", "turn": "reply", "agent_message": "hi"}\\n\')'
)


@pytest.mark.parametrize(
    ("payload", "user_model", "refused"),
    [
        (UNASKED, None, "asked for a user turn during step, where none is played"),
        ("for _ in range(10):\n    self.user.reply('more')", EchoUserModel(), "over 4 user turns during one step"),
        ("self.user.start()", EchoUserModel(), "start a user outside a reset, or twice"),
        ("self.user.reply('x' * 2**21)", EchoUserModel(), "user turn is over 1,048,576 bytes"),
    ],
)
def test_a_box_can_ask_for_user_lines_only_where_and_as_often_as_allowed(
    payload: str, user_model: Any, refused: str
) -> None:
    indented = "\n".join("    " + line for line in payload.splitlines())
    with BoxPool() as pool:
        env = boxed(with_payload(f"if action == 'ask':\n{indented}", at="step"), pool, user_model)
        env.reset(seed=0)
        info = env.step("ask")[4]
        assert refused in info["box_error"]
        assert isinstance(pool.boxes[0].failure, BoxProtocolError) and not pool.boxes[0].alive


class FailingUserModel(EchoUserModel):
    """Answers the opening, then fails as a model client can (a refused or timed-out request)."""

    def chat(self, messages: list[dict[str, Any]], **sampling: Any) -> ChatResponse:
        if any(m["role"] == "assistant" for m in messages):
            raise ConnectionError("the user model's server went away")
        return super().chat(messages, **sampling)


def test_a_model_that_fails_mid_call_stops_the_box_and_raises_as_in_process() -> None:
    with BoxPool() as pool:
        env = boxed(GOOD, pool, FailingUserModel())
        env.reset(seed=0)
        box = pool.boxes[0]
        with pytest.raises(ConnectionError, match="went away"):
            env.step("Could you tell me your order id?")
        assert not box.alive and "its user's model failed" in str(box.failure)
        env.user_model = EchoUserModel()
        env.reset(seed=0)  # a fresh box
        assert pool.started == 2 and env.step("Could you tell me your order id?")[0].startswith("Line 1")
