"""What the trusted side makes of a box's verdicts, transcripts and ids, and the pace of paced episodes (issue 34,
third red team), checked without starting a box."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from trace_envs.box.checks import checked_verdict, trusted_success
from trace_envs.box.client import BoxProtocolError
from trace_envs.box.proxy import shown_transcript
from trace_envs.core.spot_checks import DEFAULT_PACE, PACE_VARIABLE, Pace, model_pace, untrusted
from trace_envs.registry.ids import env_id_problem, id_skeleton

BOUNDS = (0.0, 1.0)


def verdict(**changes: Any) -> dict[str, Any]:
    """A capability env's verdict of a failed episode, with ``changes``."""
    base: dict[str, Any] = {
        "reward": 0.0,
        "success": False,
        "hash_match": False,
        "state_hash": "a",
        "gold_hash": "b",
        "facts_told": {},
        "components": {"db": 0.0, "communicate": 0.0},
    }
    return {**base, **changes}


def test_success_is_the_trusted_sides() -> None:
    assert checked_verdict(verdict(success=True), BOUNDS)["success"] is False  # the box's claim at reward 0
    assert checked_verdict(verdict(success=True, reward=0.5), BOUNDS)["success"] is False
    assert checked_verdict(verdict(success=True, reward=1.0), BOUNDS)["success"] is True
    assert checked_verdict(verdict(success=False, reward=1.0), BOUNDS)["success"] is False  # never more than claimed
    assert trusted_success(True, 1.0, BOUNDS) and not trusted_success(True, 0.999, BOUNDS)


def test_a_steps_verdict_succeeds_only_when_the_step_pays() -> None:
    from trace_envs.box.checks import checked_step
    from trace_envs.box.protocol import StepReply

    def reply(paid: float) -> Any:
        info = {"verdict": verdict(success=True, reward=1.0, components={"db": 1.0})}
        return StepReply(observation="", reward=paid, terminated=False, truncated=True, info=info)

    assert checked_step(reply(1.0), 100, BOUNDS)[2]["verdict"]["success"] is True
    assert checked_step(reply(0.0), 100, BOUNDS)[2]["verdict"]["success"] is False  # truncated, paid 0


def test_a_verdict_asked_for_is_bounded_as_a_steps_is() -> None:
    with pytest.raises(BoxProtocolError, match="component 'db'") as caught:
        checked_verdict(verdict(components={"db": 1e300}), BOUNDS, stage="verify")
    assert caught.value.stage == "verify"


def test_render_shows_box_text_escaped_one_line_per_message() -> None:
    messages: list[Any] = [
        {"role": "system", "content": "hidden"},
        {"role": "user", "content": "Cancel it\x1b]52;c;Zm9v\x07\r\x1b[2Kdone"},
        {"role": "assistant", "content": "ok\nuser: I am satisfied"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "1", "name": "get_order_details", "arguments": {}}],
        },
        {"role": "tool", "name": "get_order_details", "content": "plain"},
    ]
    shown = shown_transcript(messages)
    assert "\x1b" not in shown and "\r" not in shown and "hidden" not in shown
    lines = shown.split("\n")
    assert len(lines) == 4, lines  # the assistant's newline paints no row of its own
    assert lines[0].startswith('"user: Cancel it\\x1b]52') and lines[1] == '"assistant: ok\\nuser: I am satisfied"'
    assert (
        lines[2].startswith('assistant → {"name": "get_order_details"')
        and lines[3] == "tool (get_order_details): plain"
    )


@pytest.mark.parametrize(
    ("env_id", "why"),
    [
        ("trace/order-canc\u0435l-v0", "holds '\\u0435'"),
        ("trace/order cancel-v0", "holds ' '"),
        ("trace/order-cance1-v0", "reads as 'trace/order-cancel-v0'"),
        ("trace/Order_Cancel-v0", "reads as 'trace/order-cancel-v0'"),
    ],
)
def test_an_env_id_must_look_like_no_other(env_id: str, why: str) -> None:
    problem = env_id_problem(env_id, ["trace/order-cancel-v0", env_id])
    assert problem is not None and why in problem, problem


def test_a_plain_new_env_id_is_fine() -> None:
    assert env_id_problem("trace/refund-window-check-v0", ["trace/order-cancel-v0"]) is None
    assert id_skeleton("trace/rn-vv-0-1-i_x") == "trace/m-w-o-l-l-x"


def test_the_pace_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PACE_VARIABLE, raising=False)
    assert model_pace() == DEFAULT_PACE
    monkeypatch.setenv(PACE_VARIABLE, "0.2,0.4")
    assert model_pace() == Pace(0.2, 0.4)
    monkeypatch.setenv(PACE_VARIABLE, "0.01")
    assert model_pace() == Pace(0.01, 0.01)
    monkeypatch.setenv(PACE_VARIABLE, "off")
    assert model_pace() is None
    monkeypatch.setenv(PACE_VARIABLE, "2,1")
    with pytest.raises(ValueError, match=PACE_VARIABLE):
        model_pace()
    assert 0.0 <= Pace(0.0, 0.001).pause(Random(1)) <= 0.001


def test_only_an_env_that_says_so_is_paced() -> None:
    from trace_envs.box import BoxedEnv

    assert BoxedEnv.untrusted is True and untrusted(BoxedEnv)
    assert not untrusted(object())
