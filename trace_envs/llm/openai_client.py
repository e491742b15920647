"""OpenAI-compatible chat completions through the official ``openai`` SDK: hosted OpenAI, vLLM
servers (``vllm serve … --enable-auto-tool-choice``), any endpoint speaking the wire format. A
LoRA adapter served by vLLM (``--lora-modules name=path``) is selected by using its name as the model."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from trace_envs.core import ToolCall, parse_action

from .base import ChatResponse, Usage
from .client import BaseChatModel, Message, translate_sdk_error
from .spec import ModelConfig

SAMPLING_KEYS = (
    "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop", "presence_penalty",
    "frequency_penalty", "tool_choice", "parallel_tool_calls", "logprobs", "top_logprobs",
)  # fmt: skip
"""Sent as chat-completions fields; any other sampling key (vLLM's ``top_k``, ``repetition_penalty``,
``chat_template_kwargs`` …) goes in the request's ``extra_body``."""


def _sdk() -> Any:
    try:
        import openai
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise ModuleNotFoundError("openai: models need the 'llm' extra: pip install 'trace-envs[llm]'") from exc
    return openai


def to_openai(messages: list[Message]) -> list[dict[str, Any]]:
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


def from_openai(completion: Any) -> ChatResponse:
    """The first choice as a ChatResponse. A tool call with malformed JSON arguments is kept as a
    ``<tool_call>`` text block so the env reports the error to the agent (never a crash here)."""
    choice = completion.choices[0]
    message = choice.message
    content: str | None = message.content
    calls: list[ToolCall] = []
    broken: list[str] = []
    for call in message.tool_calls or []:
        function = getattr(call, "function", None)
        if function is None:
            continue
        parsed = parse_action({"id": call.id, "name": function.name, "arguments": function.arguments or "{}"})
        if parsed.errors:
            broken.append(
                f'<tool_call>{{"name": {json.dumps(function.name)}, "arguments": {function.arguments}}}</tool_call>'
            )
        calls.extend(parsed.tool_calls)
    if broken:
        calls, content = [], "\n".join([*(c for c in [content] if c), *broken])
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    return ChatResponse(
        content=content,
        tool_calls=calls,
        usage=Usage(
            input_tokens=(usage.prompt_tokens or 0) if usage is not None else 0,
            output_tokens=(usage.completion_tokens or 0) if usage is not None else 0,
            cache_read_tokens=(getattr(details, "cached_tokens", None) or 0) if details is not None else 0,
        ),
        model=completion.model or "",
        stop_reason=choice.finish_reason,
    )


class OpenAIChatModel(BaseChatModel):
    """``openai:<base_url>#<model>``. The key comes from ``ModelConfig.api_key``, ``$OPENAI_API_KEY``,
    or is a placeholder (a local vLLM server needs none)."""

    provider = "openai"
    api_key_env = "OPENAI_API_KEY"

    def __init__(self, config: ModelConfig, **kwargs: Any):
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
        self._async_clients: dict[int, Any] = {}

    def _params(
        self, messages: list[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.config.model, "messages": to_openai(messages)}
        extra = {k: v for k, v in sampling.items() if k not in SAMPLING_KEYS}
        params.update({k: v for k, v in sampling.items() if k in SAMPLING_KEYS})
        if extra:
            params["extra_body"] = extra
        if tools:
            params["tools"] = tools
        return params

    def _request(
        self, messages: list[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        params = self._params(messages, tools, sampling)
        try:
            completion = self._client.chat.completions.create(**params)
        except self._sdk.APIError as exc:
            raise translate_sdk_error(exc, self._sdk, self.spec, self.api_key_env, self.config.timeout_s) from exc
        return from_openai(completion)

    async def _arequest(
        self, messages: list[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        params = self._params(messages, tools, sampling)
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._async_clients:
            self._async_clients = {loop_id: self._sdk.AsyncOpenAI(**self._client_kwargs)}
        try:
            completion = await self._async_clients[loop_id].chat.completions.create(**params)
        except self._sdk.APIError as exc:
            raise translate_sdk_error(exc, self._sdk, self.spec, self.api_key_env, self.config.timeout_s) from exc
        return from_openai(completion)
