"""A minimal HTTP/1.1 keep-alive server connection (an ``asyncio.Protocol``) for the local fake model
endpoint: content-length bodies, partial and pipelined reads, ``Connection: close``, answers in request
order, each after its own delay on a loop timer. Just what the SDKs send, for a fraction of the CPU of a
general server (``benchmarks/fake_server_cost.py``); not for untrusted clients."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from http import HTTPStatus

MAX_HEAD_BYTES = 64 * 1024
Answer = Callable[[str, str, dict[str, str], bytes], tuple[float, int, dict[str, str], bytes]]
"""``(method, path, headers, body) -> (delay_s, status, headers, body)``; header names lower-case, the
path without its query string. Called on the event loop, one request of a connection at a time."""

_REASONS = {status.value: status.phrase for status in HTTPStatus}


class _BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def http_response(status: int, headers: dict[str, str], body: bytes, *, keep_alive: bool, head_only: bool) -> bytes:
    """The bytes of one answer; ``content-length`` (and ``connection: close``) are set here."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, '')}"]
    lines += [f"{name}: {value}" for name, value in headers.items() if name.lower() != "content-length"]
    lines.append(f"content-length: {len(body)}")
    if not keep_alive:
        lines.append("connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + body


class HttpConnection(asyncio.Protocol):
    """One client connection: buffers bytes, cuts out whole requests, and answers them one at a time
    (the next request is read only after the previous answer went out, as a sequential server would)."""

    def __init__(self, answer: Answer, connections: set[HttpConnection]):
        self._answer = answer
        self._connections = connections
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None  # an answer waiting out its delay
        self._head: tuple[str, str, dict[str, str], int, int, bool] | None = None  # parsed, body incomplete
        self._continued = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        # A client that hangs up (even mid-delay) is no error: its pending answer is dropped.
        self._connections.discard(self)
        self._transport = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._timer is None:
            self._serve_buffered()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    # ----- requests --------------------------------------------------------------------------------
    def _serve_buffered(self) -> None:
        """Answer every complete request in the buffer, stopping at one that waits out a delay."""
        while self._transport is not None and self._timer is None:
            try:
                request = self._next_request()
            except _BadRequest as bad:
                body = json.dumps({"error": {"message": str(bad)}}).encode()
                headers = {"content-type": "application/json"}
                self._send(http_response(bad.status, headers, body, keep_alive=False, head_only=False), False)
                return
            if request is None:
                return
            method, path, headers, body, keep_alive = request
            delay, status, out_headers, out_body = self._answer(method, path, headers, body)
            data = http_response(status, out_headers, out_body, keep_alive=keep_alive, head_only=method == "HEAD")
            if delay > 0:
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(delay, self._send_delayed, data, keep_alive)
                return
            self._send(data, keep_alive)

    def _send_delayed(self, data: bytes, keep_alive: bool) -> None:
        self._timer = None
        self._send(data, keep_alive)
        self._serve_buffered()

    def _send(self, data: bytes, keep_alive: bool) -> None:
        transport = self._transport
        if transport is None:
            return
        transport.write(data)
        if not keep_alive:
            transport.close()  # after the buffered answer is flushed
            self._transport = None
            self._buffer.clear()

    def _next_request(self) -> tuple[str, str, dict[str, str], bytes, bool] | None:
        """Cut the next whole request out of the buffer, or ``None`` if more bytes are needed."""
        buffer = self._buffer
        if self._head is None:
            while buffer.startswith(b"\r\n"):  # stray line breaks between requests are allowed
                del buffer[:2]
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD_BYTES:
                    raise _BadRequest(431, "request header too large")
                return None
            self._head = self._parse_head(bytes(buffer[:end]).decode("latin-1"), end + 4)
            self._continued = False
        method, path, headers, start, length, keep_alive = self._head
        if len(buffer) < start + length:
            if not self._continued and headers.get("expect", "").lower() == "100-continue":
                self._continued = True
                assert self._transport is not None
                self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            return None
        body = bytes(buffer[start : start + length])
        del buffer[: start + length]
        self._head = None
        return method, path, headers, body, keep_alive

    @staticmethod
    def _parse_head(text: str, start: int) -> tuple[str, str, dict[str, str], int, int, bool]:
        lines = text.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(400, "malformed request line")
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                raise _BadRequest(400, "malformed header line")
            headers[name.lower()] = value.strip()
        if "transfer-encoding" in headers:
            raise _BadRequest(411, "send the body with a content-length")
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise _BadRequest(400, "malformed content-length") from None
        if length < 0:
            raise _BadRequest(400, "malformed content-length")
        connection = {token.strip() for token in headers.get("connection", "").lower().split(",")}
        keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection
        if "://" in target:  # absolute form: keep the path
            target = "/" + target.split("://", 1)[1].partition("/")[2]
        return method, target.partition("?")[0], headers, start, length, keep_alive
