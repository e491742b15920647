"""The local transformers client on a tiny random Qwen3 model built offline, with and without a PEFT adapter."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from trace_envs.llm import BadRequest, make_chat_model
from trace_envs.llm.hf_client import response_from_text, to_hf
from trace_envs.rollout.chat_policy import model_turn

from .conftest import MESSAGES, TOOLS

pytestmark = pytest.mark.train


def test_tiny_model_is_deterministic_per_seed(tiny_model_dir: Path, tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file
    from trl.chat_template_utils import qwen3_chat_template

    from trace_envs.llm.tiny_model import build_tiny_model

    again = build_tiny_model(tmp_path / "again", seed=0)
    other = build_tiny_model(tmp_path / "other", seed=1)
    weights = load_file(tiny_model_dir / "model.safetensors")
    assert all(torch.equal(weights[k], v) for k, v in load_file(again / "model.safetensors").items())
    assert not all(torch.equal(weights[k], v) for k, v in load_file(other / "model.safetensors").items())
    assert (tiny_model_dir / "chat_template.jinja").read_text() == qwen3_chat_template


def test_chat_renders_template_and_counts_tokens(tiny_model_dir: Path) -> None:
    model = make_chat_model(f"hf:{tiny_model_dir}", device="cpu")
    first = model.chat(MESSAGES, TOOLS, max_tokens=12)
    second = asyncio.run(model.achat(MESSAGES, TOOLS, max_tokens=12))
    assert first.model_copy(update={"cached": False}) == second  # greedy decoding: same answer
    assert first.usage.input_tokens > 50  # the tool schemas are in the prompt
    assert 0 < first.usage.output_tokens <= 12
    assert first.stop_reason in ("stop", "length")
    sampled = [model.chat(MESSAGES, None, max_tokens=12, temperature=1.0, seed=s).content for s in (1, 1, 2)]
    assert sampled[0] == sampled[1]


def test_adapter_by_path_and_by_name(tiny_model_dir: Path, tmp_path: Path) -> None:
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    lora = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    lora.save_pretrained(tmp_path / "adapters" / "precondition_verification")
    by_name = make_chat_model(f"hf:{tiny_model_dir}@precondition_verification", adapter_root=str(tmp_path / "adapters"))
    assert isinstance(by_name.model, PeftModel)
    by_path = make_chat_model(f"hf:{tiny_model_dir}@{tmp_path / 'adapters' / 'precondition_verification'}")
    assert by_name.chat(MESSAGES, max_tokens=8).content == by_path.chat(MESSAGES, max_tokens=8).content


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="no model directory") as missing:  # not the hub's "Repo id must use …"
        make_chat_model(f"hf:{tmp_path / 'nothing-here'}")
    assert isinstance(missing.value, ValueError)  # bad input to the commands, too
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadRequest, match="cannot load a model"):  # a folder of no model (transformers' ValueError)
        make_chat_model(f"hf:{tmp_path / 'empty'}")


def test_tool_calls_stay_in_the_text_and_the_policy_parses_them() -> None:
    call = '<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W1"}}\n</tool_call>'
    response = response_from_text(f"<think>look it up</think>\nLet me check.\n{call}")
    assert response.content == f"Let me check.\n{call}" and response.tool_calls == []
    turn = model_turn(response)
    assert turn.content == "Let me check."
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("get_order_details", {"order_id": "#W1"})]
    broken = model_turn(response_from_text('<tool_call>{"name": "get_order_details", "arguments": </tool_call>'))
    assert broken.tool_calls == [] and broken.content is not None and "<tool_call>" in broken.content
    assert model_turn(response_from_text("Hello there")).action == "Hello there"


def test_messages_in_template_form() -> None:
    converted = to_hf(
        [
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "name": "t", "arguments": {"a": 1}}]},
            {"role": "tool", "id": "c", "name": "t", "content": "ok", "error": False},
        ]
    )
    assert converted[0]["tool_calls"] == [{"type": "function", "function": {"name": "t", "arguments": {"a": 1}}}]
    assert converted[1] == {"role": "tool", "name": "t", "content": "ok"}


class _SetAfter:
    """A threading.Event stand-in that reads as set from its ``calls``-th check on."""

    def __init__(self, calls: int):
        self.calls, self.checks = calls, 0

    def is_set(self) -> bool:
        self.checks += 1
        return self.checks >= self.calls


def test_a_cancelled_request_stops_generating(tiny_model_dir: Path) -> None:
    """A second Ctrl-C cancels the awaiting task but not the generation thread: the thread's generation stops at
    its next token, and a request still waiting for the lock never starts."""
    from trace_envs.llm.hf_client import HFChatModel

    model = make_chat_model(f"hf:{tiny_model_dir}")
    assert isinstance(model, HFChatModel)
    sampling: dict[str, Any] = {"max_tokens": 40, "temperature": 0}
    full = model._request(MESSAGES, None, sampling)
    assert full.usage.output_tokens > 2
    stopped = model._request(MESSAGES, None, sampling, cast(threading.Event, _SetAfter(2)))
    assert stopped.usage.output_tokens == 1  # set after the start check: the first token's check stops it
    with pytest.raises(BadRequest, match="cancelled before it started"):
        model._request(MESSAGES, None, sampling, cast(threading.Event, _SetAfter(1)))
