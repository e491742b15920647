"""The report pipe is untrusted text (issue 34, third round): the module can write to it, so the parent believes
claims of isolation only from before the module ran, keeps a bounded number of bounded refusals, and cuts what
a ``Failed`` reply says before anything keeps it."""

from __future__ import annotations

import io
import json

from trace_envs.box.audit import MAX_REPORTED
from trace_envs.box.client import (
    MAX_SIGNALS,
    SEALED,
    BoxedEnvError,
    BoxProcess,
    bounded_failure,
    bounded_lines,
)
from trace_envs.box.protocol import Failed


def reader() -> BoxProcess:
    """A BoxProcess with only what its report reader uses (no box is started)."""
    box = BoxProcess.__new__(BoxProcess)
    box.refusals, box.signals, box.sealed = [], [], []
    box._claims_closed, box._refusals_kept = False, 0
    return box


def line(**message: object) -> bytes:
    return json.dumps(message).encode()


def test_claims_of_isolation_count_only_before_the_sealed_report() -> None:
    box = reader()
    box._report(line(type="isolation", name="seccomp filter"))
    box._report(line(type=SEALED))
    box._report(line(type="isolation", name="forged layer"))
    assert box.sealed == ["seccomp filter"]


def test_refusals_and_signals_are_capped_and_cut() -> None:
    box = reader()
    for n in range(MAX_REPORTED + 50):
        box._report(line(type="blocked", event="e" * 1000, detail=f"{n}" * 2000, stage="import"))
    for _ in range(MAX_SIGNALS + 5):
        box._report(line(type="signal", signal="SIGXCPU"))
    box._report(line(type="signal", signal="not a signal"))
    assert len(box.refusals) == MAX_REPORTED and len(box.signals) == MAX_SIGNALS
    assert all(len(r.event) <= 200 and len(r.detail) <= 500 for r in box.refusals)


def test_what_is_not_a_report_is_dropped() -> None:
    box = reader()
    for text in (b"[1, 2]", b"{", b'{"type": "blocked", "event": 1}', b'"x"', b"[" * 100_000):
        box._report(text)
    assert box.refusals == [] and box.sealed == []


def test_a_line_over_the_bound_is_dropped_whole_and_never_held() -> None:
    stream = io.BytesIO(b"short\n" + b"x" * 100_000 + b"\nafter\n" + b"y" * 50)
    assert list(bounded_lines(stream, 1000)) == [b"short", b"after"]


def test_a_failed_reply_is_cut_before_anything_keeps_it() -> None:
    failed = Failed(error="F" * 3_000_000 + "\x1b[2J", message="m" * 10_000, traceback="t" * 10_000 + "end")
    cut = bounded_failure(failed)
    assert len(cut.error) == 200 and len(cut.message) == 2000 and cut.traceback.endswith("end")
    assert len(cut.traceback) == 3000
    error = BoxedEnvError(Failed(error="Name\x1b" + "N" * 500, message="boom"), stage="step")
    assert len(str(error)) < 300 and "\x1b" not in error.error
