"""Claude through the official ``anthropic`` SDK (Messages API): tool use, a separate system prompt,
and prompt caching of the stable prefix (tools, system prompt, conversation so far)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from .base import ChatResponse, Usage
from .client import BaseChatModel, Message, async_http_client, probe_sdk_endpoint, translate_sdk_error
from .spec import API_KEY_ENV, ModelConfig

SAMPLING_KEYS = (
    "max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "thinking", "tool_choice",
    "output_config", "service_tier",
)  # fmt: skip
"""Accepted sampling params. Those the installed SDK's ``messages.create`` does not take as keywords
(recent SDKs dropped ``temperature``/``top_p``/``top_k``) are sent in the request body as they are."""
DEFAULT_MAX_TOKENS = 1024
MODELS_PATH = "/v1/models"
CONVERSATION_START = "(conversation start)"
"""Placeholder user turn put before a conversation that opens with the assistant."""
_EPHEMERAL = {"type": "ephemeral"}


def _sdk() -> Any:
    try:
        import anthropic
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise ModuleNotFoundError("anthropic: models need the 'llm' extra: pip install 'trace-envs[llm]'") from exc
    return anthropic


def to_anthropic(
    messages: Sequence[Message], tools: list[dict[str, Any]] | None, cache: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, messages, tools) in Messages API form; consecutive same-role turns merged."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "system":
            system.append({"type": "text", "text": message.get("content") or ""})
            continue
        blocks: list[dict[str, Any]]
        if role == "tool":
            role, blocks = (
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": message.get("id") or "call",
                        "content": message.get("content") or "(empty result)",
                        "is_error": bool(message.get("error")),
                    }
                ],
            )
        elif role == "assistant":
            text = message.get("content")
            blocks = [{"type": "text", "text": text}] if text else []
            for index, call in enumerate(message.get("tool_calls") or []):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id") or f"call_{index}",
                        "name": call["name"],
                        "input": call["arguments"],
                    }
                )
            if not blocks:
                blocks = [{"type": "text", "text": "(no content)"}]
        else:
            blocks = [{"type": "text", "text": message.get("content") or "(no content)"}]
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if turns and turns[0]["role"] == "assistant":  # e.g. tau2's fixed agent greeting: the API wants a user turn first
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": CONVERSATION_START}]})
    tool_defs = [
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}},
        }
        for t in tools or []
    ]
    if cache:
        if tool_defs:
            tool_defs[-1] = {**tool_defs[-1], "cache_control": _EPHEMERAL}
        if system:
            system[-1] = {**system[-1], "cache_control": _EPHEMERAL}
        if turns:
            last = turns[-1]["content"]
            last[-1] = {**last[-1], "cache_control": _EPHEMERAL}
    return system, turns, tool_defs


def from_anthropic(response: Any) -> ChatResponse:
    texts, calls = [], []
    for block in response.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append({"id": block.id, "name": block.name, "arguments": dict(block.input or {})})
    usage = response.usage
    return ChatResponse(
        content="".join(texts) or None,
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
        ),
        model=response.model,
        stop_reason=response.stop_reason,
    )


class AnthropicChatModel(BaseChatModel):
    """``anthropic:<model>``. The key comes from ``ModelConfig.api_key`` or ``$ANTHROPIC_API_KEY`` (the hosted
    API without one raises :class:`MissingAPIKey` here); ``base_url`` (or ``$ANTHROPIC_BASE_URL``) points it
    at a proxy or a local test server."""

    provider = "anthropic"
    api_key_env = API_KEY_ENV["anthropic"]

    def __init__(self, config: ModelConfig, **kwargs: Any):
        config.check_api_key()
        super().__init__(config, **kwargs)
        self._sdk = _sdk()
        self._client_kwargs: dict[str, Any] = {
            "api_key": config.resolve_api_key(self.api_key_env) or "missing-api-key",
            "timeout": config.timeout_s,
            "max_retries": 0,  # retries are ours (client.py), so they are uniform across providers
        }
        if config.base_url:
            self._client_kwargs["base_url"] = config.base_url
        self._client = self._sdk.Anthropic(**self._client_kwargs)
        self._keywords = set(inspect.signature(self._client.messages.create).parameters)

    def _make_async_client(self) -> Any:
        return self._sdk.AsyncAnthropic(
            **self._client_kwargs, **async_http_client(self._sdk, self.config.http_transport, self.spec)
        )

    def check_endpoint(self) -> None:
        probe_sdk_endpoint(self._client, MODELS_PATH, self._sdk, self.spec, self.api_key_env, self.config.timeout_s)

    def _params(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        sampling = dict(sampling)
        if "stop" in sampling:
            sampling["stop_sequences"] = sampling.pop("stop")
        unknown = sorted(set(sampling) - set(SAMPLING_KEYS))
        if unknown:
            raise ValueError(f"{self.spec}: unsupported sampling params {unknown}; allowed: {list(SAMPLING_KEYS)}")
        system, turns, tool_defs = to_anthropic(messages, tools, self.config.prompt_caching)
        params: dict[str, Any] = {"model": self.config.model, "messages": turns, "max_tokens": DEFAULT_MAX_TOKENS}
        params.update({k: v for k, v in sampling.items() if k in self._keywords})
        extra = {k: v for k, v in sampling.items() if k not in self._keywords}
        if extra:
            params["extra_body"] = extra
        if system:
            params["system"] = system
        if tool_defs:
            params["tools"] = tool_defs
        return params

    def _request(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        params = self._params(messages, tools, sampling)
        try:
            response = self._client.messages.create(**params)
        except self._sdk.APIError as exc:
            raise translate_sdk_error(exc, self._sdk, self.spec, self.api_key_env, self.config.timeout_s) from exc
        return from_anthropic(response)

    async def _arequest(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        params = self._params(messages, tools, sampling)
        try:
            response = await self._async_client().messages.create(**params)
        except self._sdk.APIError as exc:
            raise translate_sdk_error(exc, self._sdk, self.spec, self.api_key_env, self.config.timeout_s) from exc
        return from_anthropic(response)
