"""Boxes kept between episodes: a proxy takes a box of its module and options, and gives it back on close.

A pool is per process: a process forked from one that holds boxes (an ``AsyncVectorEnv`` worker, a
rollout worker) starts boxes of its own and never talks to, reuses or ends its parent's; pickled, a
pool arrives empty (its limits only). The process's default pool closes its boxes at exit, in a
``multiprocessing`` worker too (whose exit skips ``atexit``).

A box returned healthy is reused by the next proxy of the same module and options (``reset`` inside the
box starts the new episode), until it has served ``limits.resets_per_box`` resets. Its successor is started
in the background before then (:meth:`BoxPool.prepare`, asked for by a proxy once its box has served half its
resets), so replacing a used-up box costs the episode loop no start. A pool also keeps what every box it
started reported (refusals of the audit hook, failures), which validation reads.

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


class Spare:
    """A box being started in the background for the next :meth:`BoxPool.acquire` of its key."""

    def __init__(self, start: Callable[[Spare], None]):
        self.box: BoxProcess | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=start, args=(self,), name="trace-envs-spare-box", daemon=True)

    def take(self) -> BoxProcess:
        """The started box, once its start is over (what the start raised, if it failed)."""
        self.thread.join()
        if self.box is None:
            raise self.error or RuntimeError("the spare box's start ended without a box or an error")
        return self.box


def source_key(source: str, options: dict[str, Any]) -> str:
    """Which boxes may serve a proxy: the module's text and the env's options."""
    text = source + "\0" + json.dumps(options, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BoxPool:
    """Idle boxes by module and options; ``max_idle`` of each kept, the rest closed."""

    def __init__(
        self,
        limits: BoxLimits | None = None,
        *,
        max_idle: int = 8,
        stop_after_failure: bool = False,
        spares: bool = True,
    ):
        self.limits = limits or BoxLimits()
        self.max_idle = max_idle
        self.stop_after_failure = stop_after_failure
        """Refuse new boxes once one has failed (validation: one hang is enough, do not wait for more)."""
        self.spares = spares
        """Start a used-up box's successor in the background (:meth:`prepare`); off, it starts when needed."""
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
        self.started_in_background = 0
        """Of :attr:`started`, the boxes started ahead of need (:meth:`prepare`)."""
        self._idle: dict[str, list[BoxProcess]] = {}
        self._spares: dict[str, Spare] = {}
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
        settings = {"max_idle": self.max_idle, "stop_after_failure": self.stop_after_failure, "spares": self.spares}
        return (type(self), (self.limits,), settings)

    def acquire(self, source: str, options: dict[str, Any]) -> BoxProcess:
        """An idle healthy box of this module and options, else the one :meth:`prepare` is starting, else a
        new one."""
        self._own()
        key = source_key(source, options)
        with self._lock:
            if self.stop_after_failure and self.failures:
                raise type(self.failures[0])(f"an earlier box failed: {self.failures[0]}", stage=self.stage())
            found, dead = self._idle_box(key)
            spare = self._spares.pop(key, None) if found is None else None
        for failure in dead:
            self.note_failure(failure)
        if found is not None:
            return found
        if spare is not None:
            return spare.take()
        try:
            box = self._start(source, options, self._boxes)
        except BoxFailure as exc:
            self.note_failure(exc)
            raise
        with self._lock:
            self.started += 1
        return box

    def _start(self, source: str, options: dict[str, Any], started: list[BoxProcess | BoxRecord]) -> BoxProcess:
        """A new box of this module and options (``started`` lists it from its spawn on, even if it fails)."""
        return BoxProcess(source, options, self.limits, refusals=self.refusals, started=started)

    def prepare(self, source: str, options: dict[str, Any]) -> None:
        """Start a box of this module and options in the background for the next :meth:`acquire`, unless one is
        idle or already starting (or :attr:`spares` is off): a proxy asks once its box has served half its
        resets, so the box that replaces it is ready when it is used up."""
        self._own()
        key = source_key(source, options)
        with self._lock:
            if (
                not self.spares
                or key in self._spares
                or self._idle.get(key)
                or (self.stop_after_failure and self.failures)
            ):
                return
            spare = Spare(lambda spare: self._start_spare(spare, source, options))
            self._spares[key] = spare
        spare.thread.start()

    def _start_spare(self, spare: Spare, source: str, options: dict[str, Any]) -> None:
        """The spare's thread: start the box; a failure is counted now and raised by the acquire that takes it."""
        started: list[BoxProcess | BoxRecord] = []
        try:
            spare.box = self._start(source, options, started)
        except BaseException as exc:  # raised again, in the caller's thread, by Spare.take
            spare.error = exc
        with self._lock:
            self._boxes.extend(started)
            if spare.box is not None:
                self.started += 1
                self.started_in_background += 1
        if isinstance(spare.error, BoxFailure):
            self.note_failure(spare.error)

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
            spares, self._spares = list(self._spares.values()), {}
        for spare in spares:  # a box still starting is in _boxes once its thread ends
            spare.thread.join()
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
