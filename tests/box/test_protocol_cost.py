"""What a boxed episode sends: what every reset would repeat (the tool schemas, the policy) crosses once, in
``Ready``; the reference solutions of an env that keeps ``CapabilityEnv``'s are formatted here from the task
(no round trip), while an env that changes either still gets exactly its own values through; and a box keeps
its trusted imports out of garbage collection."""

from __future__ import annotations

from typing import Any

import pytest

from trace_envs.box import BoxedEnvError, BoxLimits, BoxPool, BoxProcess
from trace_envs.box.protocol import Ask, Reset, ResetReply, _Message

from .conftest import CLASS, GOOD, with_payload
from .test_box import boxed, in_process_env


def wire_lines(box: BoxProcess, monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The raw reply lines ``box`` reads from now on."""
    lines: list[bytes] = []
    read = box._read_line

    def spy(deadline: float, stage: str) -> bytes:
        lines.append(read(deadline, stage))
        return lines[-1]

    monkeypatch.setattr(box, "_read_line", spy)
    return lines


def test_a_reset_sends_the_declared_tools_and_policy_as_null_and_the_parent_puts_them_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    box = BoxProcess(GOOD, limits=BoxLimits(wall_seconds=20))
    try:
        lines = wire_lines(box, monkeypatch)
        reply = box.call(Reset(seed=1))
        _, here = in_process_env().reset(seed=1)
        assert isinstance(reply, ResetReply) and reply.shared == ["tools", "policy"]
        assert b'"tools":null' in lines[0] and b'"policy":null' in lines[0]
        assert here["tools"][0]["function"]["description"].encode() not in lines[0]
        assert reply.info == here and list(reply.info) == list(here)  # the values and the keys' order
        assert box.ready.policy_text == here["policy"]
    finally:
        box.close()


def test_a_reset_whose_tools_or_policy_differ_from_the_declared_ones_sends_them_as_they_are() -> None:
    source = with_payload(
        f"_reset = {CLASS}.reset\n\n\ndef _other_reset(self, **kwargs):\n"
        "    observation, info = _reset(self, **kwargs)\n"
        "    return observation, {**info, 'tools': [*info['tools'], {'type': 'function', 'function': {'name': 'x'}}],"
        " 'policy': 'another policy'}\n\n\n"
        f"{CLASS}.reset = _other_reset",
        at="import",
    )
    box = BoxProcess(source, limits=BoxLimits(wall_seconds=20))
    try:
        reply = box.call(Reset(seed=1))
        assert reply.shared == [] and reply.info["policy"] == "another policy"
        assert reply.info["tools"][-1] == {"type": "function", "function": {"name": "x"}}
        assert reply.info["tools"][:-1] == box.ready.tool_schemas
    finally:
        box.close()


def asks(env: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The :class:`Ask` requests ``env``'s box gets from now on."""
    asked: list[Any] = []
    box = env._episode_box()
    call = box.call

    def counting(request: _Message, **kwargs: Any) -> Any:
        if isinstance(request, Ask):
            asked.append(request.what)
        return call(request, **kwargs)

    monkeypatch.setattr(box, "call", counting)
    return asked


def test_the_reference_solutions_of_capabilityenvs_own_methods_are_formatted_here_without_a_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with BoxPool(BoxLimits(wall_seconds=20)) as pool:
        env = boxed(GOOD, pool)
        here = in_process_env()
        env.reset(seed=2)
        here.reset(seed=2)
        asked = asks(env, monkeypatch)
        assert env._episode_box().ready.actions_from_task == ["oracle_actions"]  # its flawed_actions is its own
        assert env.oracle_actions() == here.oracle_actions() and env.flawed_actions() == here.flawed_actions()
        assert asked == ["flawed_actions"]
        env.close()


def test_an_env_that_overrides_its_reference_solutions_is_asked_for_them(monkeypatch: pytest.MonkeyPatch) -> None:
    source = with_payload(
        f"{CLASS}.oracle_actions = lambda self: ['its own']\n{CLASS}.flawed_actions = lambda self: None", at="import"
    )
    with BoxPool(BoxLimits(wall_seconds=20)) as pool:
        env = boxed(source, pool)
        env.reset(seed=2)
        asked = asks(env, monkeypatch)
        assert env._episode_box().ready.actions_from_task == []
        assert env.oracle_actions() == ["its own"] and env.flawed_actions() is None
        assert asked == ["oracle_actions", "flawed_actions"]
        env.close()


def test_a_box_leaves_its_trusted_imports_out_of_garbage_collection() -> None:
    """The objects of the trusted imports (about 45,000) live as long as the box: frozen before the module
    runs, so a full collection walks only what the env made since (one took 30 ms on structured-data)."""
    probe = with_payload("import gc\nraise RuntimeError(f'frozen {gc.get_freeze_count()}')", at="import")
    with pytest.raises(BoxedEnvError, match="frozen") as raised:
        BoxProcess(probe, limits=BoxLimits(wall_seconds=20))
    assert int(str(raised.value).rsplit(" ", 1)[1]) > 10_000
