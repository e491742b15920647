"""A box's stdout and stderr: pipes the trusted process drains in a thread, keeping only their ends.

Nothing a box prints reaches a disk, and what the parent holds of it is bounded twice: only the last ``tail``
bytes of each stream are kept (what an error message shows), and at most ``max_bytes`` of each is read at all.
Past that the parent closes its end, so the box's next write to the stream fails (``BrokenPipeError`` in the
module's ``print``, an env error like any other): a flood costs neither disk nor unbounded parent CPU.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading

from .lines import READ_BYTES

STREAMS = ("stdout", "stderr")


class OutputTails:
    """Drain the read ends ``fds`` (stream name to descriptor) until the box and everything it started are gone."""

    def __init__(self, fds: dict[str, int], *, tail: int, max_bytes: int):
        self.tail = tail
        self.max_bytes = max_bytes
        self.flooded: list[str] = []
        """The streams closed because the box wrote over ``max_bytes`` to them."""
        self._kept = {name: bytearray() for name in fds}
        self._read = dict.fromkeys(fds, 0)
        self._thread = threading.Thread(target=self._drain, args=(dict(fds),), daemon=True)
        self._thread.start()

    def _drain(self, fds: dict[str, int]) -> None:
        names = {fd: name for name, fd in fds.items()}
        poller = select.poll()
        for fd in names:
            poller.register(fd, select.POLLIN)
        while names:
            for fd, _ in poller.poll():
                name = names[fd]
                budget = self.max_bytes - self._read[name]
                chunk = b""
                with contextlib.suppress(OSError):
                    chunk = os.read(fd, min(READ_BYTES, budget)) if budget > 0 else b""
                if chunk:
                    self._keep(name, chunk)
                    continue
                if budget <= 0:
                    self.flooded.append(name)
                poller.unregister(fd)
                os.close(fd)
                del names[fd]

    def _keep(self, name: str, chunk: bytes) -> None:
        self._read[name] += len(chunk)
        kept = self._kept[name]
        kept += chunk
        if len(kept) > 2 * self.tail:  # trimmed now and then, not on every read
            del kept[: -self.tail]

    def text(self, name: str) -> str:
        """The end of what the box wrote to ``name`` (and a line saying so if the stream was closed for its size)."""
        text = bytes(self._kept[name][-self.tail :]).decode("utf-8", "replace")
        if name in self.flooded:
            text += f"\n[{name} closed after {self.max_bytes:,} bytes (BoxLimits.output_bytes)]"
        return text

    def finish(self, timeout: float) -> None:
        """Wait (up to ``timeout`` s) for the streams' ends: all of what the box wrote is then in :meth:`text`."""
        self._thread.join(timeout)
