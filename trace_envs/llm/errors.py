"""Errors every client raises, whatever its SDK: the retry layer and callers only see these."""

from __future__ import annotations


class LLMError(Exception):
    """A model request failed. ``retryable`` errors are retried with backoff by the client."""

    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class AuthenticationFailed(LLMError):
    """The endpoint rejected the credentials (401/403): fix the API key, retrying cannot help."""


class MissingAPIKey(AuthenticationFailed):
    """No API key is set for an endpoint that needs one; raised when the client is built, before any request.
    ``variable`` is the environment variable the key is read from (what the fix tells the user to set)."""

    def __init__(self, message: str, *, variable: str = ""):  # a default: a pickled copy is rebuilt from ``args``
        super().__init__(message)
        self.variable = variable


class BadRequest(LLMError):
    """The endpoint rejected the request itself (400/404/422): wrong model name, context too long, …"""


class ModelFolderMissing(BadRequest, ValueError):
    """An hf model names a folder that does not exist. Both bad input (a ``ValueError``: the commands name it as
    a bad ``--policy``) and a request no retry can serve (a :class:`BadRequest`), so every caller's handling of
    either reports it as it is, before any weights are looked for on the hub."""


class RateLimited(LLMError):
    """429: retried after the server's ``retry-after`` (or exponential backoff)."""

    retryable = True


class ServerError(LLMError):
    """5xx or an overloaded endpoint: retried with exponential backoff."""

    retryable = True


class RequestTimeout(LLMError):
    """The request did not finish within the client's timeout, or an open connection broke: retried."""

    retryable = True


class EndpointUnreachable(LLMError):
    """No connection to the endpoint could be made for a reason that waiting does not fix (its host name does
    not resolve, nothing listens on its port, TLS does not match): raised at once, never retried."""

    def __init__(self, message: str, *, host: str | None = None):
        super().__init__(message)
        self.host = host


class HostNotFound(EndpointUnreachable):
    """The endpoint's host name does not resolve (DNS): a typo in ``base_url``, or no network. ``hosted`` is
    true for a provider's own API host (no base URL to fix: the network is the cause)."""

    def __init__(self, message: str, *, host: str | None = None, hosted: bool = False):
        super().__init__(message, host=host)
        self.hosted = hosted


class ConnectionRefused(EndpointUnreachable):
    """The host answered that nothing listens on the endpoint's port: the server is not running there."""


def error_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it (``__cause__``, else ``__context__``), outermost first: an SDK wraps the
    transport's error, which wraps the socket's (the chain is short; the bound guards against a cycle)."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 12:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return chain


class RetriesExhausted(LLMError):
    """A retryable error persisted through every retry; ``__cause__`` is the last one."""
