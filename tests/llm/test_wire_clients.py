"""The Anthropic and OpenAI clients against a local server speaking each wire format: text, tool
calls, conversation conversion, errors, 429 with retry-after, 5xx, timeouts, cache and cost."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from trace_envs.core import ToolCall, parse_action
from trace_envs.llm import (
    AuthenticationFailed,
    BadRequest,
    BaseChatModel,
    RequestTimeout,
    RetriesExhausted,
    RetryConfig,
    make_chat_model,
)
from trace_envs.llm.client import closing_connections
from trace_envs.llm.fake_server import FakeModelServer, FakeReply
from trace_envs.rollout.chat_policy import model_turn

from .conftest import MESSAGES, TOOLS

pytest.importorskip("anthropic")
pytest.importorskip("openai")

WIRES = ["anthropic", "openai"]


def client(server: FakeModelServer, wire: str, **options: Any) -> BaseChatModel:
    options.setdefault("api_key", "test-key")
    if wire == "anthropic":
        return make_chat_model("anthropic:claude-sonnet-4-6", base_url=server.url, **options)
    return make_chat_model(f"openai:{server.openai_url}#served-model", **options)


class Sleeps:
    """Stands in for time.sleep / asyncio.sleep and records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, delay: float) -> None:
        self.delays.append(delay)

    async def asleep(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.mark.parametrize("wire", WIRES)
def test_text_reply_and_usage(server: FakeModelServer, wire: str) -> None:
    model = client(server, wire)
    response = model.chat(MESSAGES, TOOLS, temperature=0.0, max_tokens=50)
    assert response.content == "Done. ###STOP###"
    assert response.tool_calls == []
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert model.requests == 1 and model.total_usage == response.usage
    body = server.requests[-1].body
    assert body["temperature"] == 0.0 and body["max_tokens"] == 50
    if wire == "anthropic":
        assert body["system"][0]["text"] == "You are an agent."
        assert body["tools"][0]["name"] == "get_order_details" and "input_schema" in body["tools"][0]
        assert response.usage.cost_usd > 0  # claude-sonnet is in the price table
    else:
        assert body["model"] == "served-model" and body["tools"] == TOOLS
        assert response.usage.cost_usd == 0.0


@pytest.mark.parametrize("wire", WIRES)
def test_tool_calls_and_history_round_trip(server: FakeModelServer, wire: str) -> None:
    call = ToolCall(name="get_order_details", arguments={"order_id": "#W1"})
    server.enqueue(FakeReply(tool_calls=[call]))
    model = client(server, wire)
    response = model.chat(MESSAGES, TOOLS)
    expected_arguments: Any = '{"order_id": "#W1"}' if wire == "openai" else {"order_id": "#W1"}  # raw, as sent
    assert [(c["name"], c["arguments"]) for c in response.tool_calls] == [("get_order_details", expected_arguments)]
    turn = model_turn(response)
    assert turn.tool_calls[0].id == response.tool_calls[0]["id"] != ""
    assert parse_action(turn.action).tool_calls[0].arguments == {"order_id": "#W1"}
    history = [
        *MESSAGES,
        turn.message,
        {"role": "tool", "id": turn.tool_calls[0].id, "name": "get_order_details", "content": "{}", "error": True},
        {"role": "user", "content": "(error)", "error": True},
    ]
    model.chat(history, TOOLS)
    seen = server.requests[-1].messages
    assert [m["role"] for m in seen] == ["system", "user", "assistant", "tool", "user"]
    assert seen[2]["tool_calls"][0]["arguments"] == {"order_id": "#W1"}
    assert seen[3]["id"] == turn.tool_calls[0].id


def test_anthropic_prompt_caching_marks_stable_prefix(server: FakeModelServer) -> None:
    client(server, "anthropic").chat(MESSAGES, TOOLS)
    body = server.requests[-1].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    client(server, "anthropic", prompt_caching=False).chat(MESSAGES, TOOLS)
    assert "cache_control" not in server.requests[-1].body["system"][-1]


def test_openai_broken_arguments_become_an_error_observation(server: FakeModelServer) -> None:
    server.enqueue(FakeReply(tool_calls=[ToolCall(name="get_order_details")], raw_arguments='{"order_id": '))
    response = client(server, "openai").chat(MESSAGES, TOOLS)
    assert response.tool_calls[0]["arguments"] == '{"order_id": '  # the client keeps what was sent
    turn = model_turn(response)
    assert (
        turn.tool_calls == []
        and turn.action == '<tool_call>{"name": "get_order_details", "arguments": {"order_id": }</tool_call>'
    )
    parsed = parse_action(turn.action)
    assert parsed.errors and "not valid JSON" in parsed.errors[0]


def test_openai_extra_sampling_params_are_sent_as_they_are(server: FakeModelServer) -> None:
    client(server, "openai").chat(MESSAGES, None, top_k=5, seed=3)
    body = server.requests[-1].body
    assert body["top_k"] == 5 and body["seed"] == 3


@pytest.mark.parametrize("wire", WIRES)
def test_429_honours_retry_after(server: FakeModelServer, wire: str) -> None:
    server.enqueue(
        FakeReply(status=429, error="slow down", headers={"retry-after": "7"}),
        FakeReply(status=429, error="slow down", headers={"retry-after-ms": "250"}),
    )
    model = client(server, wire)
    sleeps = Sleeps()
    model._sleep = sleeps
    assert model.chat(MESSAGES).content == "Done. ###STOP###"
    assert sleeps.delays == [7.0, 0.25]
    assert model.retries == 2 and len(server.requests) == 3


@pytest.mark.parametrize("wire", WIRES)
def test_5xx_backs_off_exponentially_then_gives_up(server: FakeModelServer, wire: str) -> None:
    server.enqueue(*[FakeReply(status=503, error="overloaded")] * 4)
    model = client(server, wire, retry=RetryConfig(max_retries=3, initial_delay_s=1.0, jitter=0.0))
    sleeps = Sleeps()
    model._asleep = sleeps.asleep
    with pytest.raises(RetriesExhausted, match="gave up after 3 retries") as raised:
        asyncio.run(model.achat(MESSAGES))
    assert sleeps.delays == [1.0, 2.0, 4.0]
    assert raised.value.status == 503


@pytest.mark.parametrize("wire", WIRES)
def test_auth_and_bad_request_fail_fast_with_clear_errors(wire: str) -> None:
    with FakeModelServer(api_key="right-key") as server:
        with pytest.raises(AuthenticationFailed, match="check the API key"):
            client(server, wire, api_key="wrong-key").chat(MESSAGES)
        assert len(server.requests) == 0
        server.enqueue(FakeReply(status=400, error="prompt is too long"))
        with pytest.raises(BadRequest, match="prompt is too long"):
            client(server, wire, api_key="right-key").chat(MESSAGES)
        assert len(server.requests) == 1  # no retry


@pytest.mark.parametrize("wire", WIRES)
def test_timeout_is_retried_then_reported(wire: str) -> None:
    with FakeModelServer(delay_s=1.0) as server:
        model = client(server, wire, timeout_s=0.2, retry=RetryConfig(max_retries=1, initial_delay_s=0.0))
        with pytest.raises(RetriesExhausted) as raised:
            model.chat(MESSAGES)
        assert isinstance(raised.value.__cause__, RequestTimeout)
        assert model.retries == 1


@pytest.mark.parametrize("wire", WIRES)
def test_cache_makes_reruns_free(server: FakeModelServer, wire: str, tmp_path) -> None:
    first = client(server, wire, cache_dir=str(tmp_path)).chat(MESSAGES, TOOLS, temperature=0.0)
    again = client(server, wire, cache_dir=str(tmp_path))
    second = again.chat(MESSAGES, TOOLS, temperature=0.0)
    assert len(server.requests) == 1
    assert second.cached and not first.cached
    assert second.model_copy(update={"cached": False}) == first
    assert again.requests == 0 and again.cache_hits == 1
    again.chat(MESSAGES, TOOLS, temperature=0.5)  # different sampling -> a new request
    assert len(server.requests) == 2


@pytest.mark.parametrize("wire", WIRES)
def test_async_requests_run_concurrently(wire: str) -> None:
    with FakeModelServer(delay_s=0.2) as server:
        model = client(server, wire)

        async def many() -> list[Any]:
            async with closing_connections(model):
                return await asyncio.gather(
                    *(model.achat([*MESSAGES, {"role": "user", "content": str(i)}]) for i in range(8))
                )

        responses = asyncio.run(many())
    assert len(responses) == 8 and model.requests == 8
    assert len({r.content for r in responses}) == 1


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("transport", ["auto", "aiohttp", "httpx"])
def test_async_http_transport_is_chosen_by_config(server: FakeModelServer, wire: str, transport: str) -> None:
    """Async requests use the SDK's aiohttp transport unless ``http_transport="httpx"``; both speak
    the same wire (aiohttp is a dependency of the ``llm`` extra, so ``auto`` picks it)."""
    pytest.importorskip("aiohttp")
    sdk = pytest.importorskip(wire)
    model = client(server, wire, http_transport=transport)

    async def ask() -> tuple[Any, Any]:
        response = await model.achat(MESSAGES, TOOLS)
        http = model._async_client()._client
        await model.aclose()
        return response, http

    response, http = asyncio.run(ask())
    assert response.content == "Done. ###STOP###"
    assert isinstance(http, sdk.DefaultAioHttpClient) == (transport != "httpx"), type(http)


@pytest.mark.parametrize("wire", WIRES)
def test_aiohttp_transport_without_aiohttp_names_the_install(
    server: FakeModelServer, wire: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = pytest.importorskip(wire)

    class Missing:
        def __init__(self, **_: Any) -> None:
            raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    monkeypatch.setattr(sdk, "DefaultAioHttpClient", Missing)
    required = client(server, wire, http_transport="aiohttp")
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'trace-envs\[llm\]'"):
        asyncio.run(required.achat(MESSAGES))
    fallback = client(server, wire, http_transport="auto")

    async def ask() -> Any:
        async with closing_connections(fallback):
            return await fallback.achat(MESSAGES)

    assert asyncio.run(ask()).content == "Done. ###STOP###"


def test_unknown_sampling_param_is_named(server: FakeModelServer) -> None:
    with pytest.raises(ValueError, match="unsupported sampling params \\['frequency'\\]"):
        client(server, "anthropic").chat(MESSAGES, frequency=1)


def test_anthropic_conversation_opening_with_the_agent_gets_a_user_turn_first(server: FakeModelServer) -> None:
    greeting = [
        {"role": "system", "content": "policy"},
        {"role": "assistant", "content": "Hi! How can I help you today?"},
    ]
    client(server, "anthropic").chat([*greeting, {"role": "user", "content": "Cancel #W1."}])
    turns = server.requests[-1].body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
