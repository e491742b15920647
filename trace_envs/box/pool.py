"""Boxes kept between episodes: a proxy takes a box of its module and options, and gives it back on close.

A box returned healthy is reused by the next proxy of the same module and options (``reset`` inside the
box starts the new episode), until it has served ``limits.resets_per_box`` resets. A pool also keeps what
every box it started reported (refusals of the audit hook, failures), which validation reads.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any

from .client import BoxFailure, BoxProcess
from .limits import BoxLimits
from .protocol import Refusal


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
        self.refusals: list[Refusal] = []
        self.failures: list[BoxFailure] = []
        self.started = 0
        self._idle: dict[str, list[BoxProcess]] = {}
        self._boxes: list[BoxProcess] = []
        self._lock = threading.Lock()
        self.stage: Callable[[], str] = lambda: "start"
        """What the caller is doing (named in failures; validation sets the property being checked)."""

    def acquire(self, source: str, options: dict[str, Any]) -> BoxProcess:
        """An idle healthy box of this module and options, or a new one."""
        key = source_key(source, options)
        with self._lock:
            if self.stop_after_failure and self.failures:
                raise type(self.failures[0])(f"an earlier box failed: {self.failures[0]}", stage=self.stage())
            idle = self._idle.get(key, [])
            while idle:
                box = idle.pop()
                if box.alive and box.resets < self.limits.resets_per_box:
                    return box
                box.close()
        try:
            box = BoxProcess(source, options, self.limits, refusals=self.refusals, started=self._boxes)
        except BoxFailure as exc:
            self.note_failure(exc)
            raise
        with self._lock:
            self.started += 1
        return box

    def release(self, box: BoxProcess, source: str, options: dict[str, Any]) -> None:
        """Take ``box`` back: kept for reuse when healthy and wanted, else closed."""
        if box.failure is not None:
            self.note_failure(box.failure)
        key = source_key(source, options)
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if box.alive and box.resets < self.limits.resets_per_box and len(idle) < self.max_idle:
                idle.append(box)
                return
        box.close()

    def note_failure(self, failure: BoxFailure) -> None:
        with self._lock:
            if failure not in self.failures:
                self.failures.append(failure)

    def close(self) -> None:
        """Close every box this pool started (idle or not); :attr:`boxes` still lists them."""
        with self._lock:
            boxes, self._idle = list(self._boxes), {}
        for box in boxes:
            box.close()

    @property
    def boxes(self) -> list[BoxProcess]:
        """Every box this pool started, in order."""
        return list(self._boxes)

    def __enter__(self) -> BoxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DEFAULT: list[BoxPool] = []


def default_pool() -> BoxPool:
    """The process's shared pool (closed at exit)."""
    if not _DEFAULT:
        _DEFAULT.append(BoxPool())
        atexit.register(_DEFAULT[0].close)
    return _DEFAULT[0]
