"""What every client shares: the response cache, retries with backoff, bounded concurrency and
token/cost accounting. A provider module subclasses :class:`BaseChatModel` and implements
``_request`` / ``_arequest`` (one raw call, SDK errors translated with :func:`error_from_status`)."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import threading
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from .base import ChatResponse, Usage
from .cache import ResponseCache, cache_key
from .errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionRefused,
    EndpointUnreachable,
    HostNotFound,
    LLMError,
    RateLimited,
    RequestTimeout,
    RetriesExhausted,
    ServerError,
    error_chain,
)
from .pricing import Price, PriceTable
from .spec import ModelConfig

T = TypeVar("T")

SAMPLE_INDEX: ContextVar[int] = ContextVar("trace_envs_sample_index", default=0)
"""Which repeat of an episode the current requests belong to (set by the rollout loop). Repeats > 0
get their own cache entries (and, on the hf client, their own sampling seed), so that K samples of
one prompt are K draws, not one cached answer."""


def _cache_params(params: dict[str, Any]) -> dict[str, Any]:
    sample = SAMPLE_INDEX.get()
    return params if sample == 0 else {**params, "__sample__": sample}


Message = Mapping[str, Any]
"""A chat message as the clients read it (read-only: core's ``Message`` TypedDict, or any dict of that form)."""


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def error_from_status(
    status: int, message: str, headers: Mapping[str, str] | None, spec: str, key_env: str
) -> LLMError:
    """Translate an HTTP error status into our error classes, with a message that says what to do."""
    where = f"{spec}: HTTP {status}: {message}"
    if status in (401, 403):
        return AuthenticationFailed(
            f"{where} (check the API key: set ${key_env} or ModelConfig.api_key)", status=status
        )
    if status == 429:
        return RateLimited(where, status=status, retry_after=parse_retry_after(headers))
    if status == 408:
        return RequestTimeout(where, status=status, retry_after=parse_retry_after(headers))
    if status >= 500 or status == 409:
        return ServerError(where, status=status, retry_after=parse_retry_after(headers))
    return BadRequest(f"{where} (the request was rejected; check the model name and the messages)", status=status)


class BaseChatModel:
    """A :class:`~trace_envs.llm.ChatModel` with cache, retries, concurrency bound and accounting."""

    provider = ""
    api_key_env = ""

    def __init__(self, config: ModelConfig, prices: PriceTable | None = None):
        self.config = config
        self.spec = config.spec
        self.cache = ResponseCache(config.cache_dir) if config.cache_dir else None
        self.price: Price | None = (
            Price.model_validate(config.prices)
            if config.prices is not None
            else (prices or PriceTable.default()).lookup(config.model)
        )
        self.total_usage = Usage()
        self.requests = 0
        self.cache_hits = 0
        self.retries = 0
        self._jitter = random.Random(0)
        self._lock = threading.Lock()
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._async_clients: dict[int, Any] = {}
        self._sleep: Callable[[float], None] = time.sleep
        self._asleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    # ----- implemented by providers -----------------------------------------------------------
    @abstractmethod
    def _request(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        """One request, no retries; raises :class:`LLMError` subclasses."""

    async def _arequest(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        """Async variant; the default runs the sync request in a worker thread."""
        return await asyncio.to_thread(self._request, messages, tools, sampling)

    # ----- the ChatModel protocol ---------------------------------------------------------------
    def chat(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        params = {**self.config.sampling, **sampling}
        key = self._cache_key(messages, tools, params)
        hit = self._cached(key)
        if hit is not None:
            return hit
        delays = self._delays()
        while True:
            try:
                response = self._request(messages, tools, params)
                break
            except LLMError as exc:
                self._sleep(self._next_delay(exc, delays))
        return self._finish(key, response)

    async def achat(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        params = {**self.config.sampling, **sampling}
        key = self._cache_key(messages, tools, params)
        hit = self._cached(key)
        if hit is not None:
            return hit
        delays = self._delays()
        async with self._semaphore():
            while True:
                try:
                    response = await self._arequest(messages, tools, params)
                    break
                except LLMError as exc:
                    await self._asleep(self._next_delay(exc, delays))
        return self._finish(key, response)

    def check_endpoint(self) -> None:
        """Make one cheap request (the endpoint's model list) and raise the :class:`LLMError` a chat request
        would meet (unreachable, key refused); a client without an endpoint (a local model) has nothing to check."""

    def _make_async_client(self) -> Any:
        """A new async SDK client (providers that talk HTTP implement this)."""
        raise NotImplementedError(f"{type(self).__name__} has no async SDK client")

    def _async_client(self) -> Any:
        """This event loop's async SDK client: HTTP connections belong to the loop that opened them,
        so each loop (each ``asyncio.run``) gets its own and the previous loop's is dropped."""
        loop_id = id(asyncio.get_running_loop())
        client = self._async_clients.get(loop_id)
        if client is None:
            client = self._make_async_client()
            self._async_clients = {loop_id: client}
        return client

    async def aclose(self) -> None:
        """Close this event loop's HTTP connections (call before the loop ends); the client stays usable."""
        client = self._async_clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.close()

    # ----- helpers --------------------------------------------------------------------------------
    def _cache_key(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, params: dict[str, Any]
    ) -> str | None:
        """The request's cache key, or None without a cache (hashing the conversation is not free)."""
        if self.cache is None:
            return None
        return cache_key(self.spec, messages, tools, _cache_params(params))

    def _semaphore(self) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self.config.max_concurrency)}
        return self._semaphores[loop_id]

    def _cached(self, key: str | None) -> ChatResponse | None:
        if self.cache is None or key is None:
            return None
        hit = self.cache.get(key)
        if hit is None:
            return None
        with self._lock:
            self.cache_hits += 1
        return hit.model_copy(update={"cached": True})

    def _delays(self) -> list[int]:
        return [0]

    def _next_delay(self, exc: LLMError, attempts: list[int]) -> float:
        """Raise ``exc`` if it is final; else count the attempt and return how long to wait."""
        retry = self.config.retry
        if not exc.retryable:
            raise exc
        if attempts[0] >= retry.max_retries:
            raise RetriesExhausted(
                f"{self.spec}: gave up after {retry.max_retries} retries: {exc}", status=exc.status
            ) from exc
        if exc.retry_after is not None:
            delay = min(exc.retry_after, retry.max_retry_after_s)
        else:
            delay = min(retry.max_delay_s, retry.initial_delay_s * 2 ** attempts[0])
            with self._lock:
                delay *= 1 + retry.jitter * self._jitter.random()
        attempts[0] += 1
        with self._lock:
            self.retries += 1
        return delay

    def _finish(self, key: str | None, response: ChatResponse) -> ChatResponse:
        usage = response.usage
        if self.price is not None:
            usage = usage.model_copy(update={"cost_usd": self.price.cost(usage)})
        response = response.model_copy(update={"usage": usage})
        with self._lock:
            self.requests += 1
            self.total_usage = self.total_usage + usage
        if self.cache is not None and key is not None:
            self.cache.put(key, response)
        return response

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


def async_http_client(sdk: Any, transport: str, spec: str) -> dict[str, Any]:
    """``http_client=`` keywords for an async ``anthropic``/``openai`` SDK client. ``auto`` takes the
    SDK's own aiohttp transport when aiohttp is installed (half the client CPU per request of the
    default httpx transport: with hundreds of episodes in flight the client, not the endpoint, is
    the bound), else the SDK default; ``aiohttp`` requires it; ``httpx`` keeps the default."""
    if transport == "httpx":
        return {}
    try:
        return {"http_client": sdk.DefaultAioHttpClient()}
    except RuntimeError as exc:  # the SDK's placeholder class raises this when aiohttp is missing
        if transport == "aiohttp":
            raise ModuleNotFoundError(
                f"{spec}: http_transport='aiohttp' needs aiohttp: pip install 'trace-envs[llm]' "
                "(or set http_transport='auto')"
            ) from exc
        return {}


def translate_sdk_error(exc: Exception, sdk: Any, spec: str, key_env: str, timeout_s: float) -> Exception:
    """Map an ``anthropic``/``openai`` SDK exception (same class names in both) to our errors. A connection
    that cannot be made (no such host, refused, TLS mismatch) is checked first: an SDK may report it as a
    timeout (openai's aiohttp transport does), and waiting longer would not help."""
    if isinstance(exc, sdk.APIConnectionError):
        unreachable = unreachable_error(exc, spec)
        if unreachable is not None:
            return unreachable
    if isinstance(exc, sdk.APITimeoutError):
        return RequestTimeout(
            f"{spec}: no answer within {timeout_s:g}s (raise ModelConfig.timeout_s if the model is slow)"
        )
    if isinstance(exc, sdk.APIStatusError):
        response = getattr(exc, "response", None)
        headers = dict(response.headers) if response is not None else None
        return error_from_status(exc.status_code, _sdk_message(exc), headers, spec, key_env)
    if isinstance(exc, sdk.APIConnectionError):
        return RequestTimeout(f"{spec}: connection failed: {_root_cause(exc)}")
    return exc


PROBE_TIMEOUT_S = 15.0
"""The most a preflight request waits (the model list answers at once when the endpoint is up)."""


def probe_sdk_endpoint(client: Any, path: str, sdk: Any, spec: str, key_env: str, timeout_s: float) -> None:
    """``GET path`` (the model list) through an SDK client, no retries: an endpoint that answers at all is
    reachable, so only a refused key (401/403) or no connection is an error (raised as ours)."""
    timeout = min(timeout_s, PROBE_TIMEOUT_S)
    try:
        client.with_options(timeout=timeout, max_retries=0).get(path, cast_to=bytes)
    except sdk.APIStatusError as exc:
        if exc.status_code in (401, 403):
            raise translate_sdk_error(exc, sdk, spec, key_env, timeout) from exc
    except sdk.APIError as exc:
        raise translate_sdk_error(exc, sdk, spec, key_env, timeout) from exc


def _root_cause(exc: BaseException) -> str:
    last = error_chain(exc)[-1]
    return f"{type(last).__name__}: {last}" if str(last) else type(last).__name__


def _endpoint(exc: BaseException) -> tuple[str, str]:
    """``(host, host:port)`` of the request an SDK connection error carries (``?`` when it carries none)."""
    url = getattr(getattr(exc, "request", None), "url", None)
    host = str(getattr(url, "host", "") or "?")
    port = getattr(url, "port", None) or {"https": 443, "http": 80}.get(str(getattr(url, "scheme", "")))
    return host, f"{host}:{port}" if port else host


def unreachable_error(exc: BaseException, spec: str) -> EndpointUnreachable | None:
    """An :class:`EndpointUnreachable` naming the cause when a DNS failure, a refused connection or a TLS
    failure is among the causes of ``exc`` (whatever transport raised it), else None."""
    import socket
    import ssl

    host, address = _endpoint(exc)
    for cause in error_chain(exc):
        if isinstance(cause, socket.gaierror):
            return _host_not_found(spec, host, cause)
        if isinstance(cause, ConnectionRefusedError):
            return ConnectionRefused(
                f"{spec}: connection refused by {address}: nothing is listening there; start the model server "
                "or fix the port in the base URL",
                host=host,
            )
        if isinstance(cause, ssl.SSLError):
            return EndpointUnreachable(
                f"{spec}: TLS with {address} failed ({cause.reason or cause}): check http:// against https:// in "
                "the base URL",
                host=host,
            )
    return None


def _host_not_found(spec: str, host: str, cause: OSError) -> HostNotFound:
    """The DNS failure, with the fix that fits it: a provider's own API host (``api.anthropic.com``, no base
    URL set) resolves anywhere with a network, so the network is the cause, not a base URL."""
    from .spec import HOSTED_API

    reason = cause.strerror or cause
    if host in {hosted for _, hosted in HOSTED_API.values()}:
        return HostNotFound(
            f"{spec}: cannot resolve host {host!r} ({reason}), the provider's own API host: this machine has "
            "no network or DNS; check its connection",
            host=host,
            hosted=True,
        )
    return HostNotFound(
        f"{spec}: cannot resolve host {host!r} ({reason}): fix the host name in the base URL, or check the "
        "network and DNS of this machine",
        host=host,
    )


def _sdk_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(getattr(exc, "message", exc))


async def aclose_models(*models: Any) -> None:
    """Close the running loop's HTTP connections of these models (``None`` and models without
    ``aclose`` are skipped)."""
    for model in models:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


@contextlib.asynccontextmanager
async def closing_connections(*models: Any) -> AsyncIterator[None]:
    """:func:`aclose_models` on exit: connections die with their event loop, so a function that
    runs requests in a loop it does not outlive closes them instead of leaving that to the GC."""
    try:
        yield
    finally:
        await aclose_models(*models)


class MeteredModel:
    """A ChatModel wrapper that adds up the usage of the requests made through it (e.g. one per env
    instance, so an LLM user's tokens can be attributed to episodes). ``reset()`` starts over."""

    def __init__(self, model: Any):
        self.model = model
        self.spec: str = model.spec
        self.usage = Usage()
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.usage = Usage()

    def _count(self, response: ChatResponse) -> ChatResponse:
        with self._lock:
            self.usage = self.usage + response.usage
        return response

    def chat(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self._count(self.model.chat(messages, tools, **sampling))

    async def achat(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self._count(await self.model.achat(messages, tools, **sampling))

    async def aclose(self) -> None:
        """Close the wrapped model's connections of the running loop."""
        await aclose_models(self.model)
