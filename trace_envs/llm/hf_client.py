"""A local Hugging Face transformers model: the tokenizer's chat template renders messages and tool
schemas, ``generate`` answers, and the answer's tool calls stay in its text (Qwen/Hermes ``<tool_call>``
blocks, parsed by the rollout layer like any agent's text). An optional
PEFT adapter is loaded by directory or name. A chat template that ignores tools is replaced by one that
renders them, and conversations are rendered with TRL's training variant of the template
(:mod:`.tool_template`), as in training. For CPU tests and small GPUs; use vLLM for scale."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Sequence
from typing import Any

from .base import ChatResponse, Usage
from .client import SAMPLE_INDEX, BaseChatModel, Message
from .errors import BadRequest
from .spec import ModelConfig
from .tool_template import adapt_tool_template, render_as_trained

SAMPLING_KEYS = ("max_tokens", "max_new_tokens", "temperature", "top_p", "top_k", "seed", "stop", "repetition_penalty")
DEFAULT_MAX_NEW_TOKENS = 256
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


def to_hf(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our chat messages in the form transformers chat templates expect."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            out.append(
                {
                    "role": "assistant",
                    "content": message.get("content") or "",
                    "tool_calls": [
                        {"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                        for c in message["tool_calls"]
                    ],
                }
            )
        elif message["role"] == "tool":
            out.append({"role": "tool", "name": message.get("name", ""), "content": message.get("content") or ""})
        else:
            out.append({"role": message["role"], "content": message.get("content") or ""})
    return out


def response_from_text(text: str) -> ChatResponse:
    """The generated text without its ``<think>`` blocks. Tool calls stay in the text (Qwen/Hermes
    ``<tool_call>`` blocks); the rollout layer parses them as it does any agent's text."""
    return ChatResponse(content=_THINK.sub("", text).strip())


class HFChatModel(BaseChatModel):
    """``hf:<path>[@<adapter>]``: generation runs one request at a time (a lock), in a worker thread
    for ``achat``. Greedy by default, so answers are deterministic; pass ``temperature`` (and
    ``seed``) to sample."""

    provider = "hf"

    def __init__(self, config: ModelConfig, **kwargs: Any):
        config.check_local_model()
        super().__init__(config, **kwargs)
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
            raise ModuleNotFoundError("hf: models need the 'train' extra: pip install 'trace-envs[train]'") from exc
        self._torch = torch
        self.device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = getattr(torch, config.dtype) if config.dtype else torch.float32
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(config.model)
            model: Any = AutoModelForCausalLM.from_pretrained(config.model, dtype=dtype)
        except (OSError, ValueError) as exc:  # no such files (OSError), or a folder of no model (ValueError)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BadRequest(f"{self.spec}: cannot load a model from {config.model!r}: {first}") from exc
        if self.tokenizer.chat_template is None:
            raise BadRequest(f"{self.spec}: the tokenizer at {config.model!r} has no chat template")
        self._tool_error: str | None = None
        try:
            adapt_tool_template(self.tokenizer)  # a template without tools gets one (what training renders too)
        except ValueError as exc:  # fine for plain chat; a request with tools is refused with this line
            self._tool_error = f"{self.spec}: {exc}"
        render_as_trained(self.tokenizer)  # earlier turns as training renders them (TRL's training template)
        adapter = config.resolve_adapter()
        if adapter is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter))
        self.model = model.to(self.device).eval()
        self._generate_lock = threading.Lock()

    def prompt(self, messages: Sequence[Message], tools: list[dict[str, Any]] | None) -> str:
        """The text the model continues for ``messages`` and ``tools`` (its chat template, generation prompt added)."""
        return str(
            self.tokenizer.apply_chat_template(
                to_hf(messages), tools=tools or None, add_generation_prompt=True, tokenize=False
            )
        )

    def _request(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        unknown = sorted(set(sampling) - set(SAMPLING_KEYS))
        if unknown:
            raise ValueError(f"{self.spec}: unsupported sampling params {unknown}; allowed: {list(SAMPLING_KEYS)}")
        if tools and self._tool_error:
            raise BadRequest(self._tool_error)
        torch = self._torch
        prompt = self.prompt(messages, tools)
        inputs = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.device)
        temperature = float(sampling.get("temperature", 0.0) or 0.0)
        options: dict[str, Any] = {
            "max_new_tokens": int(sampling.get("max_new_tokens", sampling.get("max_tokens", DEFAULT_MAX_NEW_TOKENS))),
            "do_sample": temperature > 0,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if temperature > 0:
            options.update(temperature=temperature, top_p=sampling.get("top_p", 1.0), top_k=sampling.get("top_k", 0))
        if "repetition_penalty" in sampling:
            options["repetition_penalty"] = sampling["repetition_penalty"]
        if sampling.get("stop"):
            stops = sampling["stop"]
            options["stop_strings"] = [stops] if isinstance(stops, str) else list(stops)
            options["tokenizer"] = self.tokenizer
        with self._generate_lock, torch.no_grad(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(sampling.get("seed", 0)) + 1_000_003 * SAMPLE_INDEX.get())
            output = self.model.generate(**inputs, **options)
        new_tokens = output[0, inputs["input_ids"].shape[1] :]
        text = str(self.tokenizer.decode(new_tokens, skip_special_tokens=True))
        eos = self.tokenizer.eos_token_id
        finished = len(new_tokens) > 0 and int(new_tokens[-1]) == eos
        response = response_from_text(text)
        return response.model_copy(
            update={
                "usage": Usage(input_tokens=int(inputs["input_ids"].shape[1]), output_tokens=len(new_tokens)),
                "model": self.config.model,
                "stop_reason": "stop" if finished else "length",
            }
        )

    async def _arequest(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        return await asyncio.to_thread(self._request, messages, tools, sampling)
