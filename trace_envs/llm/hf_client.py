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
from .hf_batching import BatchedGenerator, GenerationCancelled, RowSampling, request_seed
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
    """``hf:<path>[@<adapter>]``: requests that arrive together (``achat`` runs each in a worker thread, and a
    rollout plays many episodes at once) are generated as one batch, and a request that arrives while a batch
    runs joins it at its next token (:mod:`.hf_batching`, at most ``max_batch`` rows). Greedy by default, so answers are deterministic; pass ``temperature`` (and ``seed``) to
    sample: each request draws from its own seeded generator."""

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
        dtype = getattr(torch, config.dtype, None) if config.dtype else torch.float32
        if not isinstance(dtype, torch.dtype):
            raise BadRequest(f"{self.spec}: dtype {config.dtype!r} is not a torch dtype; use e.g. float32 or bfloat16")
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
        self.generator = BatchedGenerator(
            self.model,
            self.tokenizer,
            self.device,
            max_batch=config.max_batch,
            prefix_tokens=config.prefix_cache_tokens,
        )
        """Generates every request of this model (and so of its adapter), batching those that arrive together."""

    def prompt(self, messages: Sequence[Message], tools: list[dict[str, Any]] | None) -> str:
        """The text the model continues for ``messages`` and ``tools`` (its chat template, generation prompt added)."""
        return str(
            self.tokenizer.apply_chat_template(
                to_hf(messages), tools=tools or None, add_generation_prompt=True, tokenize=False
            )
        )

    def _request(
        self,
        messages: Sequence[Message],
        tools: list[dict[str, Any]] | None,
        sampling: dict[str, Any],
        cancelled: threading.Event | None = None,
    ) -> ChatResponse:
        unknown = sorted(set(sampling) - set(SAMPLING_KEYS))
        if unknown:
            raise ValueError(f"{self.spec}: unsupported sampling params {unknown}; allowed: {list(SAMPLING_KEYS)}")
        if tools and self._tool_error:
            raise BadRequest(self._tool_error)
        prompt_ids = self.tokenizer(self.prompt(messages, tools), add_special_tokens=False)["input_ids"]
        try:
            generated = self.generator.generate(prompt_ids, self.row_sampling(sampling, prompt_ids), cancelled)
        except GenerationCancelled as exc:
            raise BadRequest(f"{self.spec}: {exc}") from exc
        text = str(self.tokenizer.decode(generated.tokens, skip_special_tokens=True))
        response = response_from_text(text)
        return response.model_copy(
            update={
                "usage": Usage(input_tokens=len(prompt_ids), output_tokens=len(generated.tokens)),
                "model": self.config.model,
                "stop_reason": generated.stop_reason,
            }
        )

    def row_sampling(self, sampling: dict[str, Any], prompt_ids: list[int]) -> RowSampling:
        """How this request is decoded: greedy unless ``temperature`` > 0; a sampled request is seeded from its
        ``seed``, the episode's repeat (``SAMPLE_INDEX``) and its prompt, so an episode can be replayed."""
        max_new = int(sampling.get("max_new_tokens", sampling.get("max_tokens", DEFAULT_MAX_NEW_TOKENS)))
        if max_new < 1:
            raise BadRequest(f"{self.spec}: max_tokens must be at least 1, got {max_new}")
        stops = sampling.get("stop") or ()
        penalty = sampling.get("repetition_penalty")
        return RowSampling(
            max_new_tokens=max_new,
            temperature=float(sampling.get("temperature", 0.0) or 0.0),
            top_p=float(sampling.get("top_p", 1.0)),
            top_k=int(sampling.get("top_k", 0) or 0),
            repetition_penalty=None if penalty is None else float(penalty),
            stop=(stops,) if isinstance(stops, str) else tuple(stops),
            seed=request_seed(int(sampling.get("seed", 0)), SAMPLE_INDEX.get(), prompt_ids),
        )

    async def _arequest(
        self, messages: Sequence[Message], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
    ) -> ChatResponse:
        """Generate in a worker thread. When the awaiting task is cancelled (a second Ctrl-C of a rollout),
        the thread cannot be cancelled with it: its answer ends at the next token, and a request still
        waiting for its batch never starts, so the process exits without generating answers nobody reads."""
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._request, messages, tools, sampling, cancelled)
        except asyncio.CancelledError:
            cancelled.set()
            raise
