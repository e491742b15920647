"""JSON lines from a pipe, on either side of a box: poll briefly for the next bytes, then sleep until a deadline.

Both the parent (reading replies) and the box (reading requests) read this way, so a message that comes right
after the last one finds the reader on a running CPU (:attr:`~trace_envs.box.limits.BoxLimits.spin_seconds`),
and one that comes later after a wake-up. Descriptors are waited on with ``poll``, not ``select``: a pipe's
number may be over 1,024 in a process with many open files, and the box inherits the parent's numbers.
"""

from __future__ import annotations

import os
import select
import time

READ_BYTES = 64 * 1024
"""One read of a pipe: its default capacity (a larger buffer costs a large allocation per read)."""


class PipeClosed(EOFError):
    """The writer closed its end before a whole line."""


class PipeTimeout(TimeoutError):
    """No whole line before the deadline."""


class LineTooLong(ValueError):
    """More bytes than the reader's limit without a newline."""


def wait_for(fd: int, event: int, deadline: float | None) -> bool:
    """Whether ``fd`` is ready for ``event`` (or hung up) before ``deadline`` (``time.monotonic``; None: ever)."""
    poller = select.poll()
    poller.register(fd, event)
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic()) * 1000
    return bool(poller.poll(timeout))


class LineReader:
    """The lines of the non-blocking pipe ``fd``; what is read past a line waits for the next call."""

    def __init__(self, fd: int, spin_seconds: float, max_bytes: int | None = None):
        os.set_blocking(fd, False)
        self.fd = fd
        self.spin_seconds = spin_seconds
        self.max_bytes = max_bytes
        self.buffer = bytearray()

    def readline(self, deadline: float | None = None) -> bytes:
        """The next line without its newline: :class:`PipeClosed`, :class:`PipeTimeout` or :class:`LineTooLong`
        if none comes. Each read's bytes are appended once and searched once (a line of many reads costs its
        length, not its length times the number of reads)."""
        buffer, searched = self.buffer, 0
        spin_until = time.perf_counter() + self.spin_seconds
        while (end := buffer.find(b"\n", searched)) < 0:
            if self.max_bytes is not None and len(buffer) > self.max_bytes:
                raise LineTooLong(f"over {self.max_bytes:,} bytes without a newline")
            try:
                chunk = os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                if time.perf_counter() < spin_until:
                    os.sched_yield()  # let anything else runnable have the CPU, then look again
                elif not wait_for(self.fd, select.POLLIN, deadline):
                    raise PipeTimeout from None
                continue
            if not chunk:
                raise PipeClosed
            searched = len(buffer)
            buffer += chunk
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        return line
