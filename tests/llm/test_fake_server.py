"""The fake model endpoint itself, over raw sockets: HTTP/1.1 framing (keep-alive, pipelined and
partial reads, ``Connection: close``, bad requests), error statuses, the ``route`` hook, many
concurrent delayed requests on one event loop, hang-ups, and the ``python -m`` entry point."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_envs.core import ToolCall
from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest, RouteResult

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def post(path: str, body: bytes, *extra: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "host: x", "content-type: application/json", f"content-length: {len(body)}"]
    return ("\r\n".join([*head, *extra]) + "\r\n\r\n").encode() + body


def chat(content: str = "hi", *extra: str) -> bytes:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]}).encode()
    return post("/v1/chat/completions", body, *extra)


class Client:
    """A blocking raw-socket HTTP/1.1 client that reads content-length framed answers."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self) -> tuple[int, dict[str, str], bytes]:
        status = int(self.file.readline().split()[1])
        headers: dict[str, str] = {}
        while (line := self.file.readline().decode("latin-1").strip()) != "":
            name, _, value = line.partition(":")
            headers[name.lower()] = value.strip()
        return status, headers, self.file.read(int(headers["content-length"]))

    def closed_by_server(self) -> bool:
        return self.file.read(1) == b""

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def echo_content(request: FakeRequest) -> FakeReply:
    return FakeReply(content=request.last["content"])


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(echo_content) as fake:
        yield fake


@pytest.fixture
def client(server: FakeModelServer) -> Iterator[Client]:
    connection = Client(server.port)
    yield connection
    connection.close()


def content(body: bytes) -> str:
    return str(json.loads(body)["choices"][0]["message"]["content"])


def test_keep_alive_serves_many_requests_on_one_connection(server: FakeModelServer, client: Client) -> None:
    for i in range(5):
        client.send(chat(f"turn {i}"))
        status, headers, body = client.read()
        assert status == 200 and headers["content-type"] == "application/json" and content(body) == f"turn {i}"
        assert "connection" not in headers
    assert [r.last["content"] for r in server.requests] == [f"turn {i}" for i in range(5)]


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(1, 400), max_size=8))
def test_pipelined_requests_cut_anywhere_are_answered_in_order(cuts: list[int]) -> None:
    stream = chat("first") + chat("second") + chat("third", "connection: close")
    with FakeModelServer(echo_content) as fake:
        connection = Client(fake.port)
        points = sorted({c % len(stream) for c in cuts} - {0})
        for start, end in zip([0, *points], [*points, len(stream)], strict=True):
            connection.send(stream[start:end])
        answers = [connection.read() for _ in range(3)]
        assert [content(body) for _, _, body in answers] == ["first", "second", "third"]
        assert answers[2][1]["connection"] == "close" and connection.closed_by_server()
        connection.close()


def test_pipelined_delayed_answers_keep_request_order(server: FakeModelServer, client: Client) -> None:
    server.enqueue(FakeReply(content="slow", delay_s=0.3), FakeReply(content="fast"))
    client.send(chat() + chat())
    assert [content(client.read()[2]) for _ in range(2)] == ["slow", "fast"]


def test_connection_close_and_http_1_0(server: FakeModelServer) -> None:
    for request in (chat("bye", "connection: close"), chat("old").replace(b"HTTP/1.1", b"HTTP/1.0", 1)):
        connection = Client(server.port)
        connection.send(request)
        status, headers, _ = connection.read()
        assert status == 200 and headers["connection"] == "close" and connection.closed_by_server()
        connection.close()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NONSENSE\r\n\r\n", 400),
        (b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: many\r\n\r\n", 400),
        (b"POST /v1/chat/completions HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n", 411),
    ],
)
def test_unreadable_requests_get_an_error_and_the_connection_closes(
    server: FakeModelServer, request_bytes: bytes, status: int
) -> None:
    connection = Client(server.port)
    connection.send(request_bytes)
    answer = connection.read()
    assert answer[0] == status and "message" in json.loads(answer[2])["error"]
    assert connection.closed_by_server()
    connection.close()
    assert server.requests == []


def test_error_statuses_keep_the_connection_usable() -> None:
    def responder(request: FakeRequest) -> FakeReply:
        if request.last["content"] == "boom":
            raise RuntimeError("broken responder")
        return FakeReply(content="ok")

    with FakeModelServer(responder, api_key="k") as fake:
        connection = Client(fake.port)
        auth = "authorization: Bearer k"
        cases = [
            (chat("hi"), 401),  # no key
            (post("/v1/chat/completions", b"{not json", auth), 400),
            (post("/v1/nowhere", b"{}", auth), 404),
            (chat("boom", auth), 500),
            (chat("hi", auth), 200),
        ]
        for request, status in cases:
            connection.send(request)
            answer = connection.read()
            assert answer[0] == status, answer
        assert "broken responder" in json.loads(answer_for(connection, chat("boom", auth))[2])["error"]["message"]
        anthropic = post("/v1/messages", json.dumps(CHAT).encode(), "x-api-key: wrong")
        assert json.loads(answer_for(connection, anthropic)[2])["error"]["type"] == "authentication_error"
        connection.close()
    assert [r.last["content"] for r in fake.requests] == ["boom", "hi", "boom"]


def answer_for(connection: Client, request: bytes) -> tuple[int, dict[str, str], bytes]:
    connection.send(request)
    return connection.read()


class ExtraRoutes(FakeModelServer):
    def route(self, method: str, path: str, headers: dict[str, str], raw_body: bytes) -> RouteResult | None:
        if path == "/v1/lines":
            return 200, {"Content-Type": "application/jsonl", "x-count": "2"}, b'{"a": 1}\n{"a": 2}\n'
        if path == "/v1/echo-json":
            return 201, {}, {"method": method, "body": raw_body.decode(), "agent": headers.get("user-agent")}
        if path == "/v1/broken":
            raise ValueError("route bug")
        return None


def test_route_hook_answers_raw_or_json_bodies_and_falls_back() -> None:
    with ExtraRoutes(echo_content) as fake:
        connection = Client(fake.port)
        status, headers, body = answer_for(connection, b"GET /v1/lines?page=1 HTTP/1.1\r\nhost: x\r\n\r\n")
        assert (status, headers["content-type"], headers["x-count"], body) == (
            200,
            "application/jsonl",
            "2",
            b'{"a": 1}\n{"a": 2}\n',
        )
        status, headers, body = answer_for(connection, post("/v1/echo-json", b"raw", "User-Agent: t"))
        assert status == 201 and json.loads(body) == {"method": "POST", "body": "raw", "agent": "t"}
        assert answer_for(connection, post("/v1/broken", b""))[0] == 500
        assert content(answer_for(connection, chat("built-in"))[2]) == "built-in"
        connection.close()


def test_many_concurrent_delayed_requests_all_answered_with_overlapping_delays() -> None:
    count, delay = 64, 0.5

    def responder(request: FakeRequest) -> FakeReply:
        return FakeReply(tool_calls=[ToolCall(name="t", arguments={"i": request.last["content"]})])

    async def one(port: int, i: int, first_answer: list[int], server: FakeModelServer) -> dict[str, Any]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(chat(str(i)))
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if not first_answer:
            first_answer.append(len(server.requests))  # requests received when the first answer came back
        length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))[15:])
        body = json.loads(await reader.readexactly(length))
        writer.close()
        return body

    async def many(server: FakeModelServer) -> tuple[list[dict[str, Any]], list[int]]:
        first_answer: list[int] = []
        bodies = await asyncio.gather(*(one(server.port, i, first_answer, server) for i in range(count)))
        return bodies, first_answer

    with FakeModelServer(responder, delay_s=delay) as server:
        started = time.monotonic()
        bodies, first_answer = asyncio.run(many(server))
        elapsed = time.monotonic() - started
    calls = [json.loads(b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])["i"] for b in bodies]
    assert calls == [str(i) for i in range(count)] and len(server.requests) == count
    assert first_answer == [count]  # every request was waiting out its delay before any answer went out
    assert elapsed < count * delay / 4  # sanity: the delays overlapped (serially this takes 32 s)


def test_client_hanging_up_mid_delay_is_no_error(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), FakeModelServer(echo_content, delay_s=0.2) as fake:
        for _ in range(3):
            quitter = Client(fake.port)
            quitter.send(chat("gone"))
            quitter.close()
        connection = Client(fake.port)
        assert content(answer_for(connection, chat("still here"))[2]) == "still here"
        connection.close()
    assert [r.last["content"] for r in fake.requests].count("gone") <= 3
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_port_is_known_before_serving_and_stop_is_idempotent() -> None:
    fake = FakeModelServer()
    port = fake.port
    assert fake.openai_url == f"http://127.0.0.1:{port}/v1"
    fake.start()
    request = urllib.request.Request(fake.openai_url + "/chat/completions", data=json.dumps(CHAT).encode())
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["choices"][0]["message"]["content"] == "###STOP###"
    fake.stop()
    fake.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    FakeModelServer().stop()  # never started: just frees the port


def test_command_line_prints_the_port_then_serves() -> None:
    command = [sys.executable, "-m", "trace_envs.llm.fake_server", "--responder"]
    process = subprocess.Popen(
        [*command, "trace_envs.llm.fake_server:order_cancel_agent", "--delay", "0.01"], stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        opening = {"model": "m", "messages": [{"role": "user", "content": "Scenario: order #W0000007."}]}
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/messages", data=json.dumps(opening).encode())
        with urllib.request.urlopen(request, timeout=20) as response:
            assert json.loads(response.read())["content"][0]["text"] == "Hi, please cancel my order #W0000007."
    finally:
        process.terminate()
        process.wait(timeout=10)
