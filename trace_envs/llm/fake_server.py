"""A local fake model endpoint on 127.0.0.1 that speaks both wire formats (Anthropic Messages API at
``/v1/messages``, OpenAI chat completions at ``/v1/chat/completions``, and ``GET …/models`` for a
preflight check), so the real SDK code paths run offline in tests, benchmarks and demos. A *responder* decides each answer (text, tool calls, or an
HTTP error such as 429 with retry-after); queued replies take precedence.

    with FakeModelServer(responder) as server:
        model = make_chat_model(f"openai:{server.openai_url}#fake")

It serves HTTP/1.1 keep-alive connections (:mod:`trace_envs.llm.fake_http`) on one asyncio event loop,
in a daemon thread after ``start()`` or in the calling thread in ``serve_forever()``. Answer delays are
loop timers, not sleeping threads, so hundreds of requests can wait at once for little CPU
(``benchmarks/fake_server_cost.py``). Subclasses add routes by overriding :meth:`FakeModelServer.route`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import itertools
import json
import re
import socket
import threading
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.llm.fake_http import HttpConnection

Wire = Literal["anthropic", "openai"]


class FakeToolCall(BaseModel):
    """A tool call the fake endpoint answers with (built from a dict or any object with these attributes)."""

    model_config = ConfigDict(from_attributes=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str = ""


class FakeReply(BaseModel):
    """One answer of the fake endpoint: an assistant turn, or an HTTP error (``status`` >= 400)."""

    content: str | None = None
    tool_calls: list[FakeToolCall] = Field(default_factory=list)
    raw_arguments: str | None = Field(
        default=None, description="openai: send this exact (maybe broken) arguments JSON."
    )
    status: int = 200
    error: str = "error"
    headers: dict[str, str] = Field(default_factory=dict)
    delay_s: float = 0.0


class FakeRequest(BaseModel):
    """A request as the responder sees it: the wire, the raw body, and the conversation in our
    message form (``role``/``content``/``tool_calls``/``id``)."""

    wire: Wire
    body: dict[str, Any]
    headers: dict[str, str]
    messages: list[dict[str, Any]]

    @property
    def last(self) -> dict[str, Any]:
        return self.messages[-1] if self.messages else {}

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") or []
        return [t["name"] if self.wire == "anthropic" else t["function"]["name"] for t in tools]


Responder = Callable[[FakeRequest], FakeReply]
RouteResult = tuple[int, dict[str, str], bytes | dict[str, Any] | list[Any]]
"""What :meth:`FakeModelServer.route` answers: status, headers, and a body (JSON-encoded unless it is
bytes; the content type is ``application/json`` unless the headers name one)."""


_ORDER = re.compile(r"#W\d+")


def echo_responder(request: FakeRequest) -> FakeReply:
    """Ends the conversation at once (the default responder)."""
    return FakeReply(content="###STOP###")


def order_cancel_agent(request: FakeRequest) -> FakeReply:
    """Answers as a correct agent for trace/order-cancel-v0 would, reading only the conversation;
    requests without tools are the LLM user's and get a customer's answer."""
    if not request.tool_names:
        if len(request.messages) <= 2:
            scenario_order = _ORDER.search(request.messages[0]["content"])
            return FakeReply(content=f"Hi, please cancel my order {scenario_order.group(0)}.")  # type: ignore[union-attr]
        return FakeReply(content="Thanks, that's all. ###STOP###")
    opening = next(m["content"] for m in request.messages if m["role"] == "user")
    order_id = _ORDER.search(opening).group(0)  # type: ignore[union-attr]
    results = [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]
    if not results:
        return FakeReply(tool_calls=[FakeToolCall(name="get_order_details", arguments={"order_id": order_id})])
    status = results[-1]["status"]
    if status == "pending":
        return FakeReply(tool_calls=[FakeToolCall(name="cancel_order", arguments={"order_id": order_id})])
    if status == "cancelled":
        return FakeReply(content=f"Your order {order_id} is now cancelled.")
    return FakeReply(content=f"I'm sorry, order {order_id} is already {status}, so it cannot be cancelled.")


def _messages_from_wire(wire: Wire, body: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if wire == "openai":
        for message in body.get("messages", []):
            entry: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
            if message.get("tool_calls"):
                entry["tool_calls"] = [
                    {"id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                    for c in message["tool_calls"]
                ]
            if message["role"] == "tool":
                entry["id"] = message.get("tool_call_id")
            out.append(entry)
        return out
    system = body.get("system")
    if system:
        text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
        out.append({"role": "system", "content": text})
    for message in body.get("messages", []):
        content = message["content"]
        if isinstance(content, str):
            out.append({"role": message["role"], "content": content})
            continue
        texts = [b["text"] for b in content if b["type"] == "text"]
        uses = [{"id": b["id"], "name": b["name"], "arguments": b["input"]} for b in content if b["type"] == "tool_use"]
        for block in content:
            if block["type"] == "tool_result":
                result = block.get("content")
                text = result if isinstance(result, str) else "".join(b.get("text", "") for b in result or [])
                out.append(
                    {"role": "tool", "id": block["tool_use_id"], "content": text, "error": block.get("is_error", False)}
                )
        if texts or uses:
            entry = {"role": message["role"], "content": "".join(texts) or None}
            if uses:
                entry["tool_calls"] = uses
            out.append(entry)
    return out


_to_json = json.JSONEncoder(check_circular=False).encode  # json.dumps's output, a little cheaper


def _count_tokens(value: Any) -> int:
    return len(_to_json(value).split())


class FakeModelServer:
    """An HTTP/1.1 keep-alive server on ``127.0.0.1:<free port>`` (bound at construction, so ``port`` is
    known before serving); use as a context manager. ``requests`` records every :class:`FakeRequest`;
    ``api_key`` (if set) must be sent or the answer is 401. A bad JSON body answers 400, a responder that
    raises 500, an unknown route 404; a client that hangs up early is no error.

    The responder (and :meth:`route`) run on the event loop itself, one request at a time: they must be
    quick (every responder we have is), since a blocking one holds up all other connections meanwhile.
    """

    def __init__(self, responder: Responder = echo_responder, *, api_key: str | None = None, delay_s: float = 0.0):
        self.responder = responder
        self.api_key = api_key
        self.delay_s = delay_s
        self.requests: list[FakeRequest] = []
        self._queue: list[FakeReply] = []
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._socket = socket.create_server(("127.0.0.1", 0), backlog=1024)  # many clients connect at once
        self._port = int(self._socket.getsockname()[1])
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._stop_requested = False

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """Base URL for the Anthropic SDK (it appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK (it appends ``/chat/completions``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: FakeReply) -> None:
        """Answer the next requests with these replies, in order, before asking the responder."""
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> FakeModelServer:
        """Serve on an event loop in a daemon thread; returns once the server accepts connections."""
        if self._thread is not None:
            raise RuntimeError("this FakeModelServer is already serving")
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="fake-model-server", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until ``stop()`` or the process ends (for a server in its own process)."""
        self._run(threading.Event())

    def stop(self) -> None:
        """Stop serving: close the listening socket and every connection (requests in flight are dropped)."""
        self._stop_requested = True
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if loop is None:
            self._socket.close()  # never served: the event loop's server did not take the socket over

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- extension hook ----------------------------------------------------------------------------
    def route(self, method: str, path: str, headers: dict[str, str], raw_body: bytes) -> RouteResult | None:
        """Override to serve extra routes: answer ``(status, headers, body)`` for a request this subclass
        handles, or ``None`` to fall back to the built-in ones. ``path`` has no query string; ``headers``
        have lower-case names. A ``bytes`` body goes out as it is (name its ``content-type`` in the
        headers), anything else as JSON. It runs on the event loop, so keep it quick; no delay applies."""
        return None

    # ----- serving -----------------------------------------------------------------------------------
    def _run(self, ready: threading.Event) -> None:
        try:
            asyncio.run(self._serve(ready))
        finally:
            ready.set()  # never leave start() waiting, even if serving failed

    async def _serve(self, ready: threading.Event) -> None:
        self._stopping = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        connections: set[HttpConnection] = set()
        server = await self._loop.create_server(lambda: HttpConnection(self._answer, connections), sock=self._socket)
        ready.set()
        try:
            if not self._stop_requested:
                await self._stopping.wait()
        finally:
            server.close()
            for connection in list(connections):
                connection.abort()
            await server.wait_closed()

    def _answer(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[float, int, dict[str, str], bytes]:
        """One HTTP request to ``(delay_s, status, headers, body)``: :meth:`route` first, then the wires."""
        try:
            routed = self.route(method, path, headers, raw)
            delay = 0.0
            if routed is None:
                delay, routed = self._answer_wire(method, path, headers, raw)
            status, out_headers, body = routed
            out = {"content-type": "application/json"}
            if out_headers:
                out.update({name.lower(): value for name, value in out_headers.items()})
            return delay, status, out, body if isinstance(body, bytes) else _to_json(body).encode()
        except Exception as exc:  # a broken route or reply answers 500 instead of dropping the connection
            message = f"fake server failed: {type(exc).__name__}: {exc}"
            return 0.0, 500, {"content-type": "application/json"}, json.dumps({"error": {"message": message}}).encode()

    def _answer_wire(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[float, RouteResult]:
        route = path.rstrip("/")
        wire: Wire | None = (
            "anthropic" if route.endswith("/messages")
            else "openai" if route.endswith("/chat/completions") else None
        )  # fmt: skip
        if method == "GET" and route.endswith("/models"):
            return 0.0, self._model_list(headers)
        if wire is None or method != "POST":
            return 0.0, (404, {}, {"error": {"message": f"no route {method} {path}"}})
        if not self._authorized(wire, headers):
            empty = FakeRequest(wire=wire, body={}, headers=headers, messages=[])
            return 0.0, self._encode(wire, empty, FakeReply(status=401, error="invalid api key"))
        try:
            body = json.loads(raw.decode() if raw else "{}")  # JSON is UTF-8; bad bytes are a 400 too
            # built from parsed JSON, so already valid: construct skips copying the body (less to allocate and keep)
            messages = _messages_from_wire(wire, body)
            request = FakeRequest.model_construct(wire=wire, body=body, headers=headers, messages=messages)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            empty = FakeRequest(wire=wire, body={}, headers=headers, messages=[])
            return 0.0, self._encode(wire, empty, FakeReply(status=400, error=f"malformed request: {exc}"))
        reply = self._reply_for(request)
        return reply.delay_s or self.delay_s, self._encode(wire, request, reply)

    # ----- answering ---------------------------------------------------------------------------------
    def _model_list(self, headers: dict[str, str]) -> RouteResult:
        """``GET …/models`` (the preflight's cheap request), in a shape both SDKs read: one model, "fake"."""
        if not (self._authorized("anthropic", headers) or self._authorized("openai", headers)):
            return 401, {}, {"error": {"message": "invalid api key", "type": "authentication_error"}}
        model = {"id": "fake", "object": "model", "type": "model", "created": 0, "owned_by": "fake"}
        return 200, {}, {"object": "list", "data": [model], "has_more": False, "first_id": "fake", "last_id": "fake"}

    def _reply_for(self, request: FakeRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            queued = self._queue.pop(0) if self._queue else None
        if queued is not None:
            return queued
        try:
            return self.responder(request)
        except Exception as exc:  # a broken responder answers 500 instead of dropping the connection
            return FakeReply(status=500, error=f"responder failed: {type(exc).__name__}: {exc}")

    def _authorized(self, wire: Wire, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        if wire == "anthropic" and headers.get("x-api-key") == self.api_key:
            return True
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def _encode(self, wire: Wire, request: FakeRequest, reply: FakeReply) -> tuple[int, dict[str, str], dict[str, Any]]:
        if reply.status >= 400:
            if wire == "anthropic":
                kind = {401: "authentication_error", 429: "rate_limit_error", 400: "invalid_request_error"}.get(
                    reply.status, "api_error"
                )
                return reply.status, reply.headers, {"type": "error", "error": {"type": kind, "message": reply.error}}
            return (
                reply.status,
                reply.headers,
                {"error": {"message": reply.error, "type": "error", "code": reply.status}},
            )
        n = next(self._ids)
        usage_in, usage_out = (
            _count_tokens(request.body.get("messages")),
            _count_tokens(
                [reply.content, *({"name": c.name, "arguments": c.arguments, "id": c.id} for c in reply.tool_calls)]
            ),
        )
        model = request.body.get("model", "fake")
        if wire == "anthropic":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.content}] if reply.content else []
            blocks += [
                {"type": "tool_use", "id": c.id or f"toolu_{n}_{i}", "name": c.name, "input": c.arguments}
                for i, c in enumerate(reply.tool_calls)
            ]
            body = {
                "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": blocks,
                "stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": usage_in, "output_tokens": usage_out,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            }  # fmt: skip
            return 200, reply.headers, body
        calls = [
            {"id": c.id or f"call_{n}_{i}", "type": "function",
             "function": {"name": c.name, "arguments": reply.raw_arguments or _to_json(c.arguments)}}
            for i, c in enumerate(reply.tool_calls)
        ]  # fmt: skip
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        body = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out, "total_tokens": usage_in + usage_out},
        }  # fmt: skip
        return 200, reply.headers, body


def main() -> None:
    """``python -m trace_envs.llm.fake_server --responder module:function --delay 0.02``: serve until killed,
    printing the port on the first line."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--responder", default="trace_envs.llm.fake_server:echo_responder")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    args = parser.parse_args()
    module, _, attr = args.responder.partition(":")
    responder = getattr(importlib.import_module(module), attr)
    server = FakeModelServer(responder, delay_s=args.delay)
    print(server.port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
