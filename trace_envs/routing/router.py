"""Training-free routing (TRACE §3.5): the frozen base model picks the capability adapter for a task.

The routing prompt (``templates/prompts/route.jinja``) lists each capability under a single-token
label (A, B, C, …) with its description and one successful episode, plus one label for "none". One
forward pass of the base model; the label with the highest next-token logit wins. Every label must
be exactly one token in the context where the prompt ends (checked; :class:`LabelTokenError` otherwise).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core.templates import render_template
from trace_envs.llm.tool_template import adapt_tool_template

BASE_ADAPTER = "__base__"
"""PEFT's name for "no adapter" in per-row ``adapter_names``."""

DEFAULT_LABELS = tuple(string.ascii_uppercase)


class LabelTokenError(ValueError):
    """A routing label is not a single token where the prompt ends (pick other labels)."""


class CapabilityCard(BaseModel):
    """A routable capability: its name, description, one successful example and its adapter."""

    name: str
    description: str
    example: str = ""
    adapter_path: str | None = None

    @classmethod
    def from_adapter(cls, adapter_dir: str | Path) -> CapabilityCard:
        """The card of an adapter written by ``trace-envs train`` (from its ``trace_adapter.json``)."""
        from trace_envs.training.metadata import load_metadata

        meta = load_metadata(adapter_dir)
        example = meta.example.transcript if meta.example is not None else ""
        return cls(name=meta.capability, description=meta.description, example=example, adapter_path=str(adapter_dir))


class RoutingDecision(BaseModel):
    """The router's choice for one task, with every label's logit."""

    label: str
    capability: str | None = Field(description="The chosen capability, or None for the base model.")
    adapter_path: str | None = None
    logits: dict[str, float]

    @property
    def adapter_name(self) -> str:
        """PEFT adapter name (the capability), or ``__base__`` for the unmodified base model."""
        return self.capability or BASE_ADAPTER

    def served_model_name(self, base_model_name: str) -> str:
        """The ``model`` to request from a vLLM OpenAI server started with ``--enable-lora --lora-modules``."""
        return self.capability or base_model_name

    def lora_request(self, adapter_ids: dict[str, int] | None = None) -> Any:
        """A ``vllm.lora.request.LoRARequest`` for ``LLM.generate(..., lora_request=...)`` (None: base model)."""
        if self.capability is None:
            return None
        if self.adapter_path is None:
            raise ValueError(f"capability {self.capability!r} has no adapter_path to serve")
        try:
            from vllm.lora.request import LoRARequest
        except ImportError as exc:
            raise ImportError("lora_request() needs vLLM: pip install 'trace-envs[serve]'") from exc
        lora_id = (adapter_ids or {}).get(self.capability, 1)
        return LoRARequest(self.capability, lora_id, self.adapter_path)


def vllm_lora_modules(cards: Sequence[CapabilityCard]) -> list[str]:
    """``--lora-modules`` values (``name=path``) for ``vllm serve <base> --enable-lora``."""
    return [f"{card.name}={card.adapter_path}" for card in cards if card.adapter_path]


class Router:
    """Routes tasks to capability adapters using a frozen base model's next-token logits.

    Args:
        model: A causal LM (a ``PeftModel`` is routed with its adapters disabled).
        tokenizer: Its tokenizer, with a chat template (one that ignores tools is replaced in place, as in
            rollout and training: :mod:`trace_envs.llm.tool_template`).
        cards: The capabilities to choose from, in label order.
        labels: Candidate label strings; the first ``len(cards)`` tag the capabilities, the next one is "none".
        chat_template_kwargs: Passed to ``apply_chat_template`` (default: ``enable_thinking=False``).
        max_example_chars: Each example transcript is cut to this many characters (tau2 tool results
            can be whole database records); ``None`` keeps them whole.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        cards: Sequence[CapabilityCard],
        labels: Sequence[str] = DEFAULT_LABELS,
        chat_template_kwargs: dict[str, Any] | None = None,
        max_example_chars: int | None = 4000,
    ):
        if not cards:
            raise ValueError("the router needs at least one capability card")
        if len(labels) < len(cards) + 1:
            raise ValueError(f"{len(cards)} capabilities need {len(cards) + 1} labels, got {len(labels)}")
        names = [c.name for c in cards]
        if len(set(names)) != len(names):
            raise ValueError(f"capability names must be distinct, got {names}")
        self.model = model
        adapt_tool_template(tokenizer)  # the template the routed agent is rolled out and trained with
        self.tokenizer = tokenizer
        self.cards = list(cards)
        self.label_pool = tuple(str(x) for x in labels)
        """Every candidate label (what :meth:`with_adapters` labels another set of capabilities from)."""
        self.labels = [str(x) for x in labels[: len(cards)]]
        self.none_label = str(labels[len(cards)])
        self.chat_template_kwargs = {"enable_thinking": False, **(chat_template_kwargs or {})}
        self.max_example_chars = max_example_chars

    @classmethod
    def from_pretrained(cls, base_model: str | Path, adapter_dirs: Sequence[str | Path], **options: Any) -> Router:
        """A router over the adapters ``trace-envs train`` wrote in ``adapter_dirs``, on the frozen base model and
        tokenizer loaded from ``base_model`` (a folder or hub id) in eval mode; ``options`` go to the constructor."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        cards = [CapabilityCard.from_adapter(folder) for folder in adapter_dirs]  # a missing one fails before loading
        tokenizer = AutoTokenizer.from_pretrained(str(base_model))
        model = AutoModelForCausalLM.from_pretrained(str(base_model)).eval()
        return cls(model, tokenizer, cards, **options)

    def with_adapters(self, adapter_dirs: Sequence[str | Path]) -> Router:
        """A router over other adapters on this router's base model and settings (the model is loaded once)."""
        return type(self)(
            self.model,
            self.tokenizer,
            [CapabilityCard.from_adapter(folder) for folder in adapter_dirs],
            labels=self.label_pool,
            chat_template_kwargs=self.chat_template_kwargs,
            max_example_chars=self.max_example_chars,
        )

    @property
    def all_labels(self) -> list[str]:
        return [*self.labels, self.none_label]

    def prompt(self, task: str) -> str:
        """The routing prompt's text (what the user turn says)."""
        skills = [
            {"label": label, "name": card.name, "description": card.description, "example": self._example(card)}
            for label, card in zip(self.labels, self.cards, strict=True)
        ]
        return render_template(
            "prompts/route.jinja", task=task, skills=skills, none_label=self.none_label, labels=self.all_labels
        )

    def _example(self, card: CapabilityCard) -> str:
        limit = self.max_example_chars
        if limit is None or len(card.example) <= limit:
            return card.example
        return card.example[:limit].rstrip() + "\n[…]"

    def chat_text(self, task: str) -> str:
        """The full model input: the routing prompt as a user turn, then the assistant generation prompt."""
        text = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": self.prompt(task)}],
            tokenize=False,
            add_generation_prompt=True,
            **self.chat_template_kwargs,
        )
        return str(text)

    def label_token_ids(self, chat_text: str) -> list[int]:
        """The single token id of each label right after ``chat_text``; raises :class:`LabelTokenError`."""
        prefix = self.tokenizer(chat_text, add_special_tokens=False)["input_ids"]
        shown = self.tokenizer.decode(prefix)
        ids = []
        for label in self.all_labels:
            full = self.tokenizer(chat_text + label, add_special_tokens=False)["input_ids"]
            if len(full) == len(prefix) + 1 and full[: len(prefix)] == prefix:
                ids.append(full[-1])  # the label is one token appended to the prompt's own tokens
                continue
            # Re-tokenising prompt+label may re-split the prompt's last whitespace; what the model emits
            # next is still one token if the label alone is one token that decodes right after the prompt.
            alone = self.tokenizer(label, add_special_tokens=False)["input_ids"]
            if len(alone) == 1 and self.tokenizer.decode(prefix + alone) == shown + label:
                ids.append(alone[0])
                continue
            pieces = self.tokenizer.convert_ids_to_tokens(alone)
            raise LabelTokenError(
                f"routing label {label!r} is not a single token where the prompt ends (alone it tokenizes as "
                f"{pieces!r}): choose labels that are single tokens in this tokenizer, e.g. Router(..., labels=[...])"
            )
        if len(set(ids)) != len(ids):
            raise LabelTokenError(f"routing labels {self.all_labels} map to repeated token ids {ids}")
        return ids

    def route(self, task: str) -> RoutingDecision:
        """Route one task (its opening message)."""
        return self.route_batch([task])[0]

    def route_batch(self, tasks: Sequence[str]) -> list[RoutingDecision]:
        """Route several tasks with one batched forward pass of the frozen base model."""
        import torch

        texts = [self.chat_text(task) for task in tasks]
        label_ids = [self.label_token_ids(text) for text in texts]
        side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "left"
        try:
            batch = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        finally:
            self.tokenizer.padding_side = side
        device = next(self.model.parameters()).device
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad(), _base_only(self.model):
            logits = self.model(**batch).logits[:, -1, :].float()
        decisions = []
        for row, ids in enumerate(label_ids):
            scores = [float(logits[row, i]) for i in ids]
            best = max(range(len(scores)), key=lambda i: scores[i])
            card = self.cards[best] if best < len(self.cards) else None
            decisions.append(
                RoutingDecision(
                    label=self.all_labels[best],
                    capability=card.name if card else None,
                    adapter_path=card.adapter_path if card else None,
                    logits=dict(zip(self.all_labels, scores, strict=True)),
                )
            )
        return decisions


class _base_only:
    """Context manager: run a ``PeftModel`` with its adapters disabled (any other model as is)."""

    def __init__(self, model: Any):
        self.context = model.disable_adapter() if hasattr(model, "disable_adapter") else None

    def __enter__(self) -> None:
        if self.context is not None:
            self.context.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.context is not None:
            self.context.__exit__(*exc)
