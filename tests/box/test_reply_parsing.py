"""How the parent reads a reply: with the one model its request may get (not the union of every reply), whole
however many reads it takes, and a reply of another kind or of no kind still kills the box."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from trace_envs.box import BoxLimits, BoxPool, BoxProcess, BoxProtocolError, client
from trace_envs.box.protocol import Reset, Step

from .conftest import GOOD, with_payload
from .test_box import boxed, in_process_env


def writes_reply(condition: str, reply: dict[str, Any]) -> str:
    """Payload code that, when ``condition`` holds, writes ``reply`` on the reply pipe itself (the box's own
    reply follows it)."""
    line = json.dumps(reply).encode() + b"\n"
    return f"if {condition}:\n    import os, sys\n    os.write(int(sys.argv[2]), {line!r})"


WRONG_KIND_AT_STEP = with_payload(writes_reply("action == 'lie'", {"kind": "answer", "value": 1}), at="step")


def test_a_reply_is_parsed_with_the_model_its_request_expects_not_the_union(monkeypatch: pytest.MonkeyPatch) -> None:
    box = BoxProcess(GOOD, limits=BoxLimits(wall_seconds=20))
    try:

        def union(line: bytes) -> None:
            raise AssertionError(f"the union of every reply parsed a reply of the expected kind: {line[:80]!r}")

        monkeypatch.setattr(client.REPLY, "validate_json", union)
        reply = box.call(Reset(seed=3))
        _, here = in_process_env().reset(seed=3)
        assert reply.info == here
        assert box.call(Step(action="hello")).kind == "step"
    finally:
        box.close()


def test_a_reply_of_another_kind_is_a_protocol_error_that_names_both() -> None:
    with BoxPool(BoxLimits(wall_seconds=20)) as pool:
        env = boxed(WRONG_KIND_AT_STEP, pool)
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step("lie")
        assert terminated and reward == 0.0 and info["ended"] == "box_error"
        assert "the box answered 'answer' to a step request" in info["box_error"]
        assert pool.failures and isinstance(pool.failures[0], BoxProtocolError)
        assert not pool.boxes[0].alive  # killed: its next reply (the real one) is never read


def test_a_reset_answered_by_a_step_reply_raises_a_protocol_error() -> None:
    step = {"kind": "step", "observation": "", "reward": 0, "terminated": False, "truncated": False, "info": {}}
    lying = with_payload(writes_reply("self.task is not None", step))
    box = BoxProcess(lying, limits=BoxLimits(wall_seconds=20))
    try:
        box.call(Reset(seed=0))
        with pytest.raises(BoxProtocolError, match="answered 'step' to a reset request"):
            box.call(Reset(seed=1))
        assert not box.alive
    finally:
        box.close()


def test_a_reply_larger_than_one_read_comes_back_whole_read_a_pipe_capacity_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reply over the pipe's capacity (64 KiB) takes several reads: it is joined, not cut. Each read asks for
    at most that much (a larger buffer, never filled by one read of a pipe, costs a large allocation per call)."""
    big = with_payload(
        "if action == 'big':\n    return 'big', 0.0, False, False, {'blob': 'x' * 300_000, 'turn': 1}", at="step"
    )
    sizes: list[int] = []
    read = client.os.read

    def recording(fd: int, size: int) -> bytes:
        sizes.append(size)
        return read(fd, size)

    monkeypatch.setattr(client.os, "read", recording)
    box = BoxProcess(big, limits=BoxLimits(wall_seconds=20))
    try:
        box.call(Reset(seed=0))
        reply = box.call(Step(action="big"))
        assert reply.observation == "big" and reply.info["blob"] == "x" * 300_000
        assert box.call(Step(action="big")).info["turn"] == 1  # and the next reply starts clean
        assert sizes and max(sizes) <= 64 * 1024
    finally:
        box.close()


def test_a_reply_of_many_reads_costs_its_length_not_its_length_times_the_reads() -> None:
    """A 32 MiB reply arrives in hundreds of reads; joining them by copying what came before each time (or
    searching all of it for the newline each time) costs gigabytes of copying, seconds of the parent's CPU."""
    size = 32 * 2**20
    big = with_payload(f"if action == 'big':\n    return 'big', 0.0, False, False, {{'blob': 'x' * {size}}}", at="step")
    box = BoxProcess(big, limits=BoxLimits(step_seconds=60, reply_bytes=64 * 2**20))  # a cap raised on purpose
    try:
        box.call(Reset(seed=0))
        before = time.thread_time()
        reply = box.call(Step(action="big"))
        spent = time.thread_time() - before
        assert len(reply.info["blob"]) == size
        assert spent < 1.0, f"reading a {size:,}-byte reply took {spent:.2f} s of the parent's CPU"
    finally:
        box.close()
