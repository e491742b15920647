"""Chat templates without tools: detection, the replacement's rendering token for token (a SmolLM2-like
template), Qwen3's template left as it is, and the same prompt tokens in the HF client and in training."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import parse_action
from trace_envs.llm.tool_template import adapt_tool_template, renders_tools, tool_template_for

from .conftest import MESSAGES, TOOLS

pytest.importorskip("transformers")
pytestmark = pytest.mark.train

SMOLLM2_LIKE_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
"""A ChatML template that never reads ``tools`` (as SmolLM2-Instruct's)."""

EXPECTED_PROMPT = (
    "<|im_start|>system\nYou are an agent.\n\n# Tools\n\nYou may call one or more functions to assist with the user "
    "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "get_order_details", "description": "Get an order.", "parameters": '
    '{"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}\n</tools>\n\n'
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> "
    'XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\nCancel order #W1.<|im_end|>\n<|im_start|>assistant\n"
)
"""The documented format: the tools in the system prompt, one JSON schema per line inside <tools>."""


def _tokenizer(model_dir: Path, template: str | None = None) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    if template is not None:
        tokenizer.chat_template = template
    return tokenizer


def _ids(tokenizer: Any, **kwargs: Any) -> list[int]:
    text = tokenizer.apply_chat_template(MESSAGES, tools=TOOLS, add_generation_prompt=True, tokenize=False, **kwargs)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_a_template_without_tools_is_detected(tiny_model_dir: Path) -> None:
    assert not renders_tools(_tokenizer(tiny_model_dir, SMOLLM2_LIKE_TEMPLATE))
    assert renders_tools(_tokenizer(tiny_model_dir))  # the tiny model's Qwen3 template


def test_the_replacement_renders_tools_token_for_token(tiny_model_dir: Path) -> None:
    tokenizer = _tokenizer(tiny_model_dir, SMOLLM2_LIKE_TEMPLATE)
    without_tools = _ids(tokenizer)
    assert "get_order_details" not in tokenizer.decode(without_tools)  # the model never saw the tools
    assert adapt_tool_template(tokenizer) == "trl-qwen3"
    assert _ids(tokenizer) == list(tokenizer(EXPECTED_PROMPT, add_special_tokens=False)["input_ids"])
    assert renders_tools(tokenizer)


def test_qwen3_template_is_left_byte_for_byte(tiny_model_dir: Path) -> None:
    tokenizer = _tokenizer(tiny_model_dir)
    template, before = tokenizer.chat_template, _ids(tokenizer)
    assert tool_template_for(tokenizer) is None
    assert adapt_tool_template(tokenizer) is None
    assert tokenizer.chat_template == template
    assert _ids(tokenizer) == before == list(tokenizer(EXPECTED_PROMPT, add_special_tokens=False)["input_ids"])


def test_a_non_chatml_template_without_tools_is_one_clear_error(tiny_model_dir: Path) -> None:
    tokenizer = _tokenizer(tiny_model_dir, "{% for m in messages %}{{ m['content'] }}\n{% endfor %}")
    with pytest.raises(ValueError, match=r"ignores tools and is not ChatML: set tokenizer\.chat_template"):
        adapt_tool_template(tokenizer)


def test_the_reply_format_parses_to_a_tool_call() -> None:
    from trace_envs.llm.hf_client import response_from_text

    reply = '<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W1"}}\n</tool_call>'
    parsed = parse_action(response_from_text(reply).content)
    assert not parsed.errors
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_order_details", {"order_id": "#W1"})]


def test_hf_client_and_training_render_the_same_prompt(tiny_model_dir: Path, tmp_path: Path) -> None:
    """The HF client replaces the template in the model folder, and TRL's training variant of the replacement
    renders the prompt with the same tokens: training sees what inference sees."""
    from trl.chat_template_utils import get_training_chat_template

    from trace_envs.llm import make_chat_model

    folder = tmp_path / "smol-like"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "chat_template.jinja").write_text(SMOLLM2_LIKE_TEMPLATE, encoding="utf-8")
    client = make_chat_model(f"hf:{folder}")
    served = _ids(client.tokenizer)  # type: ignore[attr-defined]
    assert served == list(client.tokenizer(EXPECTED_PROMPT, add_special_tokens=False)["input_ids"])  # type: ignore[attr-defined]
    trained = _tokenizer(folder)
    adapt_tool_template(trained)
    assert _ids(trained, chat_template=get_training_chat_template(trained)) == served


def test_hf_client_refuses_tools_only_where_it_cannot_render_them(tiny_model_dir: Path, tmp_path: Path) -> None:
    from trace_envs.llm import BadRequest, make_chat_model

    folder = tmp_path / "plain"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "chat_template.jinja").write_text(
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}", encoding="utf-8"
    )
    client = make_chat_model(f"hf:{folder}")
    assert client.chat(MESSAGES, max_tokens=2).content is not None  # plain chat still works
    with pytest.raises(BadRequest, match="ignores tools and is not ChatML"):
        client.chat(MESSAGES, tools=TOOLS, max_tokens=2)
