"""A model that is a person or an agent, behind the OpenAI chat-completions wire format on 127.0.0.1.

    python benchmarks/relay_endpoint.py --dir relay/ [--port 8765] [--timeout 1800]
    # then, e.g.: python benchmarks/synthesis_real_model.py --model openai:http://127.0.0.1:8765/v1#relay

Each ``POST /v1/chat/completions`` is written as one readable Markdown file, ``DIR/REQUESTS/NNNN.md`` (every
message with its role, then the tools and the response format when the request has them), and the request
waits until ``DIR/REPLIES/NNNN.md`` exists; its text is the assistant's answer. Write a reply elsewhere and
move it in (``mv``), or it is read once its size has stayed the same for ``--settle`` seconds. A request
that gets no reply within ``--timeout`` seconds answers 504. The same request sent again (a client retry, or
a resumed benchmark) gets the same number, so it is answered once. Token counts in the answer's ``usage``
are estimates (4 characters a token, :func:`trace_envs.analysis.trajectories.estimate_tokens`), not a
tokenizer's.

The library's fake servers (:mod:`trace_envs.llm.fake_server`) answer on one event loop and must answer
quickly; a relay waits minutes per request, so it serves each request in a thread of its own
(:class:`http.server.ThreadingHTTPServer`). The client's own timeout must be longer than the wait:
``ModelConfig.timeout_s`` (``synthesis_real_model.py --timeout-s``) is the SDK's per-request timeout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from trace_envs.analysis.trajectories import estimate_tokens

DEFAULT_TIMEOUT_S = 1800.0


def _text(content: Any) -> str:
    """A message's content as text (a string, or the text parts of a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def render_request(number: int, body: dict[str, Any]) -> str:
    """One request as Markdown: the messages with their roles, then the tools and response format, if any."""
    lines = [f"# Request {number:04d} (model {body.get('model', '?')})", ""]
    lines += [f"Answer by writing the assistant's reply to REPLIES/{number:04d}.md.", ""]
    for index, message in enumerate(body.get("messages", []), start=1):
        lines += [f"## Message {index}: {message.get('role', '?')}", "", _text(message.get("content")), ""]
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            lines += [f"Tool call `{function.get('name')}`: `{function.get('arguments')}`", ""]
    for key in ("tools", "tool_choice", "response_format"):
        if body.get(key):
            lines += [f"## {key}", "", "```json", json.dumps(body[key], indent=2, ensure_ascii=False), "```", ""]
    return "\n".join(lines)


def request_key(body: dict[str, Any]) -> str:
    """What makes two requests the same question (sampling settings aside)."""
    asked = {key: body.get(key) for key in ("model", "messages", "tools", "tool_choice", "response_format")}
    return hashlib.sha256(json.dumps(asked, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class Relay:
    """The request and reply folders, and which request got which number (kept in ``DIR/index.json``)."""

    def __init__(
        self, folder: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S, settle_s: float = 1.0, poll_s: float = 0.5
    ):
        self.requests = folder / "REQUESTS"
        self.replies = folder / "REPLIES"
        self.index_path = folder / "index.json"
        self.timeout_s, self.settle_s, self.poll_s = timeout_s, settle_s, poll_s
        self.requests.mkdir(parents=True, exist_ok=True)
        self.replies.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._index: dict[str, int] = (
            json.loads(self.index_path.read_text(encoding="utf-8")) if self.index_path.exists() else {}
        )

    def number_for(self, body: dict[str, Any]) -> int:
        """The request's number: the one it had if it was asked before, else the next, writing its file."""
        key = request_key(body)
        with self._lock:
            if key in self._index:
                return self._index[key]
            number = max(self._index.values(), default=0) + 1
            self._index[key] = number
            _write_atomic(self.requests / f"{number:04d}.md", render_request(number, body))
            _write_atomic(self.index_path, json.dumps(self._index, indent=1))
        print(f"request {number:04d} waiting for {self.replies / f'{number:04d}.md'}", flush=True)
        return number

    def wait_for_reply(self, number: int) -> str | None:
        """The reply's text once its file exists and has stopped growing; None after the timeout."""
        path = self.replies / f"{number:04d}.md"
        deadline = time.monotonic() + self.timeout_s
        seen: tuple[int, float] | None = None
        while time.monotonic() < deadline:
            if path.exists():
                size = path.stat().st_size
                if size and seen is not None and seen[0] == size and time.monotonic() - seen[1] >= self.settle_s:
                    return path.read_text(encoding="utf-8")
                if seen is None or seen[0] != size:
                    seen = (size, time.monotonic())
            time.sleep(self.poll_s)
        return None


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def completion(number: int, body: dict[str, Any], reply: str) -> dict[str, Any]:
    """The reply as an OpenAI chat completion, with estimated token counts."""
    prompt_tokens = sum(estimate_tokens(_text(m.get("content"))) for m in body.get("messages", []))
    completion_tokens = estimate_tokens(reply)
    return {
        "id": f"chatcmpl-relay-{number:04d}", "object": "chat.completion", "created": 0,
        "model": body.get("model", "relay"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }  # fmt: skip


def make_handler(relay: Relay) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``relay``."""

    class RelayHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # the relay prints its own lines
            return

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "relay_error", "code": status}})

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "relay", "object": "model", "owned_by": "relay"}]})
            else:
                self._error(404, f"no route GET {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._error(404, f"no route POST {self.path}")
                return
            try:
                body = json.loads(raw or b"{}")
                number = relay.number_for(body)
            except (ValueError, TypeError, AttributeError) as exc:
                self._error(400, f"malformed request: {exc}")
                return
            reply = relay.wait_for_reply(number)
            if reply is None:
                self._error(504, f"no reply to request {number:04d} within {relay.timeout_s:g}s")
                return
            print(f"request {number:04d} answered ({len(reply)} characters)", flush=True)
            self._send(200, completion(number, body, reply))

    return RelayHandler


def serve(relay: Relay, port: int = 0) -> ThreadingHTTPServer:
    """A server for ``relay`` on ``127.0.0.1:port`` (0: a free port), not yet serving."""
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(relay))
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True, help="folder of REQUESTS/, REPLIES/ and index.json")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds to wait for one reply")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds a reply file must stay unchanged")
    args = parser.parse_args()
    if args.timeout <= 0 or args.settle < 0:
        parser.error("--timeout must be > 0 and --settle >= 0")
    server = serve(Relay(args.dir, timeout_s=args.timeout, settle_s=args.settle), args.port)
    port = server.server_address[1]
    print(f"relay on http://127.0.0.1:{port}/v1 (model spec openai:http://127.0.0.1:{port}/v1#relay)", flush=True)
    print(f"requests in {args.dir / 'REQUESTS'}, replies expected in {args.dir / 'REPLIES'}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
