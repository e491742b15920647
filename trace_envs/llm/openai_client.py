"""OpenAI-compatible chat completions through the official ``openai`` SDK: hosted OpenAI, vLLM
servers (``vllm serve … --enable-auto-tool-choice``), any endpoint speaking the wire format. A
LoRA adapter served by vLLM (``--lora-modules name=path``) is selected by using its name as the model.

Requests go through the SDK client's own ``post`` (its auth, base URL, timeouts and error classes)
with the body we build and the JSON answer decoded here: the typed ``chat.completions.create`` layer
costs about twice the CPU per request, which matters with hundreds of episodes in flight."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .base import ChatResponse, Usage
from .client import BaseChatModel, Message, async_http_client, probe_sdk_endpoint, translate_sdk_error
from .errors import ServerError
from .spec import API_KEY_ENV, ModelConfig

CHAT_PATH = "/chat/completions"
MODELS_PATH = "/models"
SAMPLING_KEYS = (
    "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop", "presence_penalty",
    "frequency_penalty", "tool_choice", "parallel_tool_calls", "logprobs", "top_logprobs",
)  # fmt: skip
"""The standard chat-completions sampling fields. Any other sampling key (vLLM's ``top_k``,
``repetition_penalty``, ``chat_template_kwargs`` …) is sent in the body as it is."""


def _sdk() -> Any:
    try:
        import openai
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise ModuleNotFoundError("openai: models need the 'llm' extra: pip install 'trace-envs[llm]'") from exc
    return openai


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our chat messages in chat-completions form."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message.get("id") or "call", "content": message.get("content") or ""}
            )
        elif role == "assistant" and message.get("tool_calls"):
            out.append(
                {
                    "role": "assistant",
                    "content": message.get("content"),
                    "tool_calls": [
                        {
                            "id": call.get("id") or f"call_{index}",
                            "type": "function",
                            "function": {
                                "name": call["name"],
                                "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                            },
                        }
                        for index, call in enumerate(message["tool_calls"])
                    ],
                }
            )
        else:
            out.append({"role": role, "content": message.get("content") or ""})
    return out


def from_openai(completion: dict[str, Any]) -> ChatResponse:
    """The first choice of a chat-completions response (wire JSON) as a ChatResponse. Tool calls are kept
    raw (``arguments`` as the JSON string sent, maybe malformed: the rollout layer reports that to the
    agent), so nothing here can crash on a model's output."""
    choices = completion.get("choices") or []
    if not choices:
        raise ValueError(f"chat completion without choices: {json.dumps(completion)[:200]}")
    choice = choices[0]
    message = choice.get("message") or {}
    content: str | None = message.get("content")
    calls = [
        {"id": call.get("id", ""), "name": function.get("name"), "arguments": function.get("arguments") or "{}"}
        for call in message.get("tool_calls") or []
        if isinstance(function := call.get("function"), dict)
    ]
    usage = completion.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return ChatResponse(
        content=content,
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            cache_read_tokens=details.get("cached_tokens") or 0,
        ),
        model=completion.get("model") or "",
        stop_reason=choice.get("finish_reason"),
    )


class OpenAIChatModel(BaseChatModel):
    """``openai:<base_url>#<model>``. The key comes from ``ModelConfig.api_key`` or ``$OPENAI_API_KEY``; the
    hosted API without one raises :class:`MissingAPIKey` here, other endpoints (a vLLM server) get a placeholder."""

    provider = "openai"
    api_key_env = API_KEY_ENV["openai"]

    def __init__(self, config: ModelConfig, **kwargs: Any):
        config.check_api_key()
        super().__init__(config, **kwargs)
        self._sdk = _sdk()
        self._client_kwargs: dict[str, Any] = {
            "api_key": config.resolve_api_key(self.api_key_env) or "EMPTY",
            "timeout": config.timeout_s,
            "max_retries": 0,
        }
        if config.base_url:
            self._client_kwargs["base_url"] = config.base_url
        self._client = self._sdk.OpenAI(**self._client_kwargs)

    def _make_async_client(self) -> Any:
        return self._sdk.AsyncOpenAI(
            **self._client_kwargs, **async_http_client(self._sdk, self.config.http_transport, self.spec)
        )

    def check_endpoint(self) -> None:
        probe_sdk_endpoint(self._client, MODELS_PATH, self._sdk, self.spec, self.api_key_env, self.config.timeout_s)

    def _params(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        """The request body: standard fields, then any extra (vLLM) sampling params, sent as they are."""
        params: dict[str, Any] = {"model": self.config.model, "messages": to_openai(messages)}
        params.update(sampling)
        if tools:
            params["tools"] = tools
        return params

    def _decode(self, raw: bytes) -> ChatResponse:
        try:
            return from_openai(json.loads(raw))
        except (ValueError, TypeError, AttributeError) as exc:
            raise ServerError(f"{self.spec}: the endpoint answered with a malformed chat completion: {exc}") from exc

    def _request(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        params = self._params(messages, tools, sampling)
        try:
            raw = self._client.post(CHAT_PATH, body=params, cast_to=bytes)
        except self._sdk.APIError as exc:
            raise translate_sdk_error(exc, self._sdk, self.spec, self.api_key_env, self.config.timeout_s) from exc
        return self._decode(raw)

    async def _arequest(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        params = self._params(messages, tools, sampling)
        try:
            raw = await self._async_client().post(CHAT_PATH, body=params, cast_to=bytes)
        except self._sdk.APIError as exc:
            raise translate_sdk_error(exc, self._sdk, self.spec, self.api_key_env, self.config.timeout_s) from exc
        return self._decode(raw)
