"""Boxes kept between episodes: a proxy takes a box of its module and options, and gives it back on close.

A pool is per process: a process forked from one that holds boxes (an ``AsyncVectorEnv`` worker, a
rollout worker) starts boxes of its own and never talks to, reuses or ends its parent's; pickled, a
pool arrives empty (its limits only). The process's default pool closes its boxes at exit, in a
``multiprocessing`` worker too (whose exit skips ``atexit``).

A box returned healthy is reused by the next proxy of the same module and options (``reset`` inside the
box starts the new episode), until it has served ``limits.resets_per_box`` resets. A pool also keeps what
every box it started reported (refusals of the audit hook, failures), which validation reads.

A pool keeps only small things: a box that is gone becomes a :class:`~trace_envs.box.client.BoxRecord` (no
declaration, reply or buffer of it is kept), the last :data:`MAX_RECORDS` of those, and the first
:data:`MAX_FAILURES` failures without their tracebacks (whose frames would hold what the box sent); every
failure is counted by kind (:attr:`BoxPool.failure_counts`). An idle box is checked before it is reused
(:meth:`~trace_envs.box.client.BoxProcess.idle_and_sound`): one that died after its last reply is never handed out.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import multiprocessing.util
import os
import threading
from collections.abc import Callable
from typing import Any

from .client import BoxFailure, BoxProcess, BoxRecord
from .limits import WEAKER_BOX_VARIABLE, BoxLimits
from .protocol import Refusal

MAX_RECORDS = 64
"""Records of boxes that are gone, kept per pool (the newest)."""
MAX_FAILURES = 64
"""Failures kept per pool (the first; every one is counted)."""


def source_key(source: str, options: dict[str, Any]) -> str:
    """Which boxes may serve a proxy: the module's text and the env's options."""
    text = source + "\0" + json.dumps(options, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BoxPool:
    """Idle boxes by module and options; ``max_idle`` of each kept, the rest closed."""

    def __init__(self, limits: BoxLimits | None = None, *, max_idle: int = 8, stop_after_failure: bool = False):
        self.limits = limits or BoxLimits()
        self.max_idle = max_idle
        self.stop_after_failure = stop_after_failure
        """Refuse new boxes once one has failed (validation: one hang is enough, do not wait for more)."""
        self.stage: Callable[[], str] = lambda: "start"
        """What the caller is doing (named in failures; validation sets the property being checked)."""
        self._fresh()

    def _fresh(self) -> None:
        """No boxes yet, in this process."""
        self.refusals: list[Refusal] = []
        self.failures: list[BoxFailure] = []
        self.failure_counts: dict[str, int] = {}
        """Every box failure of this pool, by kind (``timeout``, ``crashed``, ``protocol``)."""
        self.started = 0
        self._idle: dict[str, list[BoxProcess]] = {}
        self._boxes: list[BoxProcess | BoxRecord] = []
        self._lock = threading.Lock()
        self.owner = os.getpid()

    @property
    def owned(self) -> bool:
        """Whether this process made the pool (not a process forked from it since)."""
        return self.owner == os.getpid()

    def _own(self) -> None:
        """In a process forked since the pool got its boxes: let go of the parent's boxes (close this process's
        copies of their pipes, never the boxes) and start afresh."""
        if not self.owned:
            inherited = self._boxes
            self._fresh()
            for box in inherited:
                if isinstance(box, BoxProcess):
                    box.kill()  # a box of another process: only our copies of its pipes are closed

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (e.g. with a boxed env class, to a spawned worker): an empty pool with the same settings."""
        return (type(self), (self.limits,), {"max_idle": self.max_idle, "stop_after_failure": self.stop_after_failure})

    def acquire(self, source: str, options: dict[str, Any]) -> BoxProcess:
        """An idle healthy box of this module and options, or a new one."""
        self._own()
        key = source_key(source, options)
        with self._lock:
            if self.stop_after_failure and self.failures:
                raise type(self.failures[0])(f"an earlier box failed: {self.failures[0]}", stage=self.stage())
            found, dead = self._idle_box(key)
        for failure in dead:
            self.note_failure(failure)
        if found is not None:
            return found
        try:
            box = BoxProcess(source, options, self.limits, refusals=self.refusals, started=self._boxes)
        except BoxFailure as exc:
            self.note_failure(exc)
            raise
        with self._lock:
            self.started += 1
        return box

    def _idle_box(self, key: str) -> tuple[BoxProcess | None, list[BoxFailure]]:
        """An idle box of ``key`` that can serve (the others closed), and the failures of those found dead."""
        idle, dead = self._idle.get(key, []), list[BoxFailure]()
        while idle:
            box = idle.pop()
            if box.idle_and_sound() and box.resets < self.limits.resets_per_box:
                return box, dead
            if box.failure is not None:
                dead.append(box.failure)
            box.close()
        self._forget_gone()
        return None, dead

    def release(self, box: BoxProcess, source: str, options: dict[str, Any]) -> None:
        """Take ``box`` back: kept for reuse when healthy and wanted, else closed."""
        self._own()
        if box.failure is not None:
            self.note_failure(box.failure)
        key = source_key(source, options)
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if box.alive and box.resets < self.limits.resets_per_box and len(idle) < self.max_idle:
                idle.append(box)
                return
        box.close()
        with self._lock:
            self._forget_gone()

    def _forget_gone(self) -> None:
        """Replace the boxes that are gone by their small records, keeping the newest :data:`MAX_RECORDS`."""
        kept = [box.record() if isinstance(box, BoxProcess) and box.gone else box for box in self._boxes]
        records = [index for index, box in enumerate(kept) if isinstance(box, BoxRecord)]
        dropped = set(records[: max(0, len(records) - MAX_RECORDS)])
        self._boxes[:] = [box for index, box in enumerate(kept) if index not in dropped]

    def note_failure(self, failure: BoxFailure) -> None:
        """Keep ``failure`` (the first :data:`MAX_FAILURES`, without traceback) and count it by kind."""
        with self._lock:
            if any(failure is seen for seen in self.failures):
                return
            self._count(failure)
            if len(self.failures) < MAX_FAILURES:
                failure.__traceback__ = failure.__context__ = failure.__cause__ = None
                self.failures.append(failure)

    def _count(self, failure: BoxFailure) -> None:
        self.failure_counts[failure.reason] = self.failure_counts.get(failure.reason, 0) + 1

    def close(self) -> None:
        """Close every box this pool started (idle or not); :attr:`boxes` still lists them."""
        self._own()
        with self._lock:
            boxes, self._idle = list(self._boxes), {}
        for box in boxes:
            if isinstance(box, BoxProcess):
                box.close()
        with self._lock:
            self._forget_gone()

    @property
    def boxes(self) -> list[BoxProcess | BoxRecord]:
        """The boxes this pool started, in order: those that are gone as records (the newest :data:`MAX_RECORDS`)."""
        return list(self._boxes)

    def __enter__(self) -> BoxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DEFAULT: list[BoxPool] = []


def default_pool() -> BoxPool:
    """The process's shared pool, closed at exit; a process forked from this one gets a pool of its own."""
    if not _DEFAULT or not _DEFAULT[0].owned:
        pool = BoxPool()
        _DEFAULT[:] = [pool]
        atexit.register(pool.close)
        multiprocessing.util.Finalize(pool, pool.close, exitpriority=10)  # a multiprocessing worker skips atexit
    return _DEFAULT[0]


def allow_weaker_box() -> None:
    """``--weaker-box`` / ``weaker_box=True``: from now on, boxes of this process (its default pool's, and every
    new :class:`BoxLimits`) and of the workers it starts run with the kernel layers this host has, instead of
    refusing to start without one; reports still name every layer that was in force."""
    os.environ[WEAKER_BOX_VARIABLE] = "1"
    for pool in _DEFAULT:
        pool.limits = pool.limits.model_copy(update={"weaker_box": True})
