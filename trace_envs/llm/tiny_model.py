"""Build a tiny, randomly initialised Qwen3 chat model offline (for tests, demos and CPU smoke runs).

The tokenizer is a small byte-level BPE trained on local text (Python's standard library sources and
the tool-call markup), the chat template is TRL's Qwen3 template byte for byte (so TRL recognises it
and parses ``<tool_call>`` blocks), and the model is a two-layer ``Qwen3ForCausalLM`` of about 200k
parameters. Everything is seeded: the same seed gives the same weights. Used by the HF client tests
and by ``trace-envs make-tiny-model``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP_TOKENS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
VOCAB_SIZE = 2000
MAX_POSITIONS = 32768
"""Context length: RoPE has no learned positions, so room for long tau2 prompts costs nothing."""

_EXTRA_TEXT = [
    '<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W1234567"}}\n</tool_call>',
    "Hi, I'm Ava Lee. Please cancel my order #W1234567, the desk lamp. Thank you, that's all I needed. ###STOP###",
    "You are a customer service agent that helps the user according to the <policy> provided below.",
]


def _corpus(max_files: int = 120) -> Iterator[str]:
    """Deterministic local training text: sorted stdlib sources (first ``max_files``) plus tool markup."""
    stdlib = Path(sys.modules["json"].__file__ or "").resolve().parents[1]
    files = sorted(p for p in stdlib.glob("*.py"))[:max_files]
    for path in files:
        try:
            yield path.read_text(encoding="utf-8", errors="ignore")
        except OSError:
            continue
    yield from _EXTRA_TEXT * 50


def build_tokenizer(vocab_size: int = VOCAB_SIZE) -> Any:
    """A byte-level BPE ``PreTrainedTokenizerFast`` with the special tokens a Qwen3 template needs."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(), trainer=trainer)
    tokenizer.add_tokens(MARKUP_TOKENS)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        model_max_length=MAX_POSITIONS,
    )
    fast.chat_template = qwen3_chat_template
    return fast


def build_tiny_model(out_dir: str | Path, seed: int = 0, vocab_size: int = VOCAB_SIZE) -> Path:
    """Write a tiny random Qwen3 model + tokenizer + chat template to ``out_dir``; return the path.

    Loadable with ``AutoModelForCausalLM.from_pretrained(out_dir)`` and ``AutoTokenizer`` and usable
    as the spec ``hf:<out_dir>``. Touches no global RNG state (torch's RNG is forked around init).
    """
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocab_size)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id, do_sample=False, max_new_tokens=64
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
