"""The scripted user is deterministic: answers from facts, confirms, ends on statements."""

from __future__ import annotations

from trace_envs.core import STOP_TOKEN, ScriptedUser, UserFact, UserScript

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
