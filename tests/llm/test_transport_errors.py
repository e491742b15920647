"""An endpoint that cannot be reached is not a slow model: a host name that does not resolve and a port with
nothing listening fail at once (no retries, no "raise timeout_s" advice) naming the cause, through every
transport; timeouts, 429 and 5xx are still retried. ``check_endpoint`` makes the preflight's one cheap request."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from trace_envs.llm import (
    AuthenticationFailed,
    BaseChatModel,
    ConnectionRefused,
    EndpointUnreachable,
    HostNotFound,
    RetriesExhausted,
    RetryConfig,
    ServerError,
    make_chat_model,
)
from trace_envs.llm.fake_server import FakeModelServer, FakeReply

from ..conftest import free_port
from .conftest import MESSAGES

pytest.importorskip("anthropic")
pytest.importorskip("openai")

UNRESOLVABLE = "http://no-such-host.invalid:8000"
"""``.invalid`` never resolves (RFC 2606): the lookup fails locally, without a network."""
TRANSPORTS = ["httpx", "aiohttp"]
PATIENT = RetryConfig(max_retries=6, initial_delay_s=2.0)
"""Retries that would take over a minute: a test finishing in seconds shows that none happened."""


def client(wire: str, base_url: str, transport: str = "httpx", **options: Any) -> BaseChatModel:
    options = {"api_key": "k", "timeout_s": 60, "retry": PATIENT, "http_transport": transport, **options}
    if wire == "anthropic":
        return make_chat_model("anthropic:claude-sonnet-4-6", base_url=base_url, **options)
    return make_chat_model(f"openai:{base_url}/v1#served", **options)


def call(model: BaseChatModel, mode: str) -> None:
    if mode == "sync":
        model.chat(MESSAGES)
        return

    async def once() -> None:
        try:
            await model.achat(MESSAGES)
        finally:
            await model.aclose()

    asyncio.run(once())


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
@pytest.mark.parametrize(("mode", "transport"), [("sync", "httpx"), ("async", "httpx"), ("async", "aiohttp")])
def test_an_unresolvable_host_fails_at_once_naming_it(wire: str, mode: str, transport: str) -> None:
    if transport == "aiohttp":
        pytest.importorskip("aiohttp")
    model = client(wire, UNRESOLVABLE, transport)
    start = time.monotonic()
    with pytest.raises(HostNotFound) as raised:
        call(model, mode)
    assert time.monotonic() - start < 10
    message = str(raised.value)
    assert "cannot resolve host 'no-such-host.invalid'" in message and "timeout_s" not in message
    assert model.retries == 0 and not raised.value.retryable


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
@pytest.mark.parametrize(("mode", "transport"), [("sync", "httpx"), ("async", "httpx"), ("async", "aiohttp")])
def test_a_refused_connection_fails_at_once_naming_the_port(wire: str, mode: str, transport: str) -> None:
    if transport == "aiohttp":
        pytest.importorskip("aiohttp")
    port = free_port()
    model = client(wire, f"http://127.0.0.1:{port}", transport)
    start = time.monotonic()
    with pytest.raises(ConnectionRefused) as raised:
        call(model, mode)
    assert time.monotonic() - start < 10
    assert f"connection refused by 127.0.0.1:{port}" in str(raised.value)
    assert "timeout_s" not in str(raised.value) and model.retries == 0


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_rate_limits_and_server_errors_are_still_retried(wire: str) -> None:
    with FakeModelServer() as server:
        base = server.url
        model = client(wire, base, retry=RetryConfig(max_retries=2, initial_delay_s=0.0))
        server.enqueue(FakeReply(status=429, error="slow down"), FakeReply(status=503, error="overloaded"))
        assert model.chat(MESSAGES).content is not None
        assert model.retries == 2
        server.enqueue(*[FakeReply(status=500, error="boom")] * 3)
        with pytest.raises(RetriesExhausted) as raised:
            model.chat(MESSAGES)
        assert isinstance(raised.value.__cause__, ServerError)


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_check_endpoint_makes_one_cheap_request_and_names_what_is_wrong(wire: str) -> None:
    with FakeModelServer(api_key="right") as server:
        client(wire, server.url, api_key="right").check_endpoint()  # the model list answers
        with pytest.raises(AuthenticationFailed, match="check the API key"):
            client(wire, server.url, api_key="wrong").check_endpoint()
        assert server.requests == []  # no chat request was made (nothing was spent)
    with pytest.raises(EndpointUnreachable, match="connection refused"):
        client(wire, f"http://127.0.0.1:{free_port()}").check_endpoint()
    with pytest.raises(HostNotFound):
        client(wire, UNRESOLVABLE).check_endpoint()
