"""Reading a box's pipes, on either side: poll a little before sleeping, so a quick answer costs no wake-up.

A round trip between two sleeping processes pays two wake-ups (tens of microseconds each on an idle machine,
as much as a step of an env); polling for ``spin`` seconds first skips them whenever the other side answers
within that time. Where no core is idle, callers pass 0 (:func:`~trace_envs.box.limits.spin_allowed`).
"""

from __future__ import annotations

import os
import select
import time

CHUNK = 1 << 20


def read_chunk(fd: int, spin: float, deadline: float | None) -> bytes | None:
    """What the non-blocking pipe ``fd`` holds, polling it for ``spin`` seconds and then sleeping in ``select``
    until ``deadline`` (``time.monotonic``; ``None``: none). ``b""`` at its end, ``None`` past the deadline."""
    polling_until = time.perf_counter() + spin
    while True:
        try:
            return os.read(fd, CHUNK)
        except BlockingIOError:
            pass
        if time.perf_counter() < polling_until:
            continue
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        readable, _, _ = select.select([fd], [], [], timeout)
        if not readable:
            return None
        polling_until = 0.0
