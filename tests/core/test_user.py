"""The scripted user is deterministic: answers from facts, confirms, ends on statements."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_envs.core import (
    CONFIRM_CUES,
    REQUEST_CUES,
    STOP_TOKEN,
    Reply,
    ScriptedUser,
    Task,
    UserFact,
    UserScript,
    check_replies,
    read_message,
)

SCRIPT = UserScript(
    opening="Please cancel my order.",
    facts=[UserFact(keys=["order id", "order number"], answer="It's #W123."), UserFact(keys=["email"], answer="a@b.c")],
    max_unanswered=2,
)


def test_answers_questions_from_its_facts() -> None:
    user = ScriptedUser(SCRIPT)
    assert user.start() == "Please cancel my order."
    assert user.reply("Could you give me your order number?") == "It's #W123."
    assert user.reply("What is your email and order id?") == "It's #W123. a@b.c"
    assert not user.done


def test_confirms_when_asked() -> None:
    user = ScriptedUser(SCRIPT)
    assert user.reply("I will cancel #W123. Do you confirm (yes/no)?") == SCRIPT.confirm_reply


def test_unknown_questions_then_gives_up() -> None:
    user = ScriptedUser(SCRIPT)
    assert user.reply("What is your favourite colour?") == SCRIPT.unknown_reply
    assert user.reply("And your shoe size?").endswith(STOP_TOKEN)
    assert user.done


def test_a_statement_ends_the_conversation() -> None:
    user = ScriptedUser(SCRIPT)
    assert user.reply("Your order has been cancelled.") == f"{SCRIPT.closing} {STOP_TOKEN}"
    assert user.done
    assert user.reply("Anything else?") == STOP_TOKEN


def test_empty_messages_are_nudged_then_end() -> None:
    user = ScriptedUser(SCRIPT)
    assert "didn't get any message" in user.reply("   ")
    assert user.reply("").endswith(STOP_TOKEN)


# ----- how the user reads a message, stated as data -------------------------------------------------------
_OLD_REQUEST = re.compile(
    r"\?|\b(please (provide|share|give|tell|confirm|let me know)|could you|can you|may i (have|know)|"
    r"let me know|what is|what's|which)\b",
    re.IGNORECASE,
)
_OLD_CONFIRM = re.compile(
    r"\b(confirm|proceed|go ahead|shall i|should i|would you like me to|do you want me to|yes/no|"
    r"is that (correct|right)|is this (correct|right))\b",
    re.IGNORECASE,
)
WORDS = [*REQUEST_CUES, *CONFIRM_CUES, "please", "order id", "email", "tell", "whichever", "?", "I", "can", "x"]


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(st.sampled_from(WORDS) | st.text(max_size=6), max_size=6).map(" ".join))
def test_the_cue_lists_read_messages_exactly_as_the_former_regexes(text: str) -> None:
    reading, answers = read_message(SCRIPT, text)
    old_answers = [f.answer for f in SCRIPT.facts if any(k in text.lower() for k in f.keys)]
    if _OLD_REQUEST.search(text):
        expected = "answer" if old_answers else ("confirm" if _OLD_CONFIRM.search(text) else "unknown")
    else:
        expected = "close" if text.strip() else "empty"
    assert reading == expected
    assert answers == (old_answers if expected == "answer" else [])


def _task(*messages: str, replies: list[Reply]) -> Task:
    return Task(
        initial_state={}, goal="g", user=SCRIPT.model_copy(update={"replies": replies}), solution=list(messages)
    )


def test_stated_replies_hold_the_reference_to_them() -> None:
    assert check_replies(_task("I will cancel it. Shall I proceed?", "Done.", replies=["confirm", "close"])) is None
    assert check_replies(_task("Done.", replies=[])) is None  # not stated: not checked
    no_question = check_replies(_task("I will cancel it now.", "Done.", replies=["confirm", "close"]))
    assert no_question is not None and "step 0" in no_question and "gets 'close'" in no_question
    names_a_key = check_replies(_task("Shall I cancel order number #W123?", replies=["confirm"]))
    assert names_a_key is not None and "fact key(s) ['order number']" in names_a_key
    assert "2 replies but the reference solution has 1" in (
        check_replies(_task("Done.", replies=["close", "close"])) or ""
    )


def test_reset_refuses_a_reference_that_would_get_another_reply() -> None:
    import gymnasium as gym

    from trace_envs.core import CapabilityEnv

    env = gym.make("trace/order-cancel-v0").unwrapped
    assert isinstance(env, CapabilityEnv)
    generate = env.generate

    def asks_nothing(rng: random.Random) -> Task:
        task = generate(rng)
        return task.model_copy(update={"user": task.user.model_copy(update={"replies": ["confirm"]})})

    env.generate = asks_nothing  # type: ignore[method-assign]
    with pytest.raises(
        RuntimeError, match=r"OrderCancelEnv: seed 4: reference step \d .* should get the user's 'confirm'"
    ):
        env.reset(seed=4)
