"""Tools for chat templates that have none: detect a template that ignores ``tools``, and give it one.

A chat template that never mentions the tool schemas (SmolLM2's, for one) shows the model no tools, so it
cannot call any. :func:`renders_tools` renders a probe conversation with and without a probe tool and
compares. Such a ChatML template (``<|im_start|>role ... <|im_end|>`` turns) is replaced by TRL's Qwen3
template, which renders tools in the documented Hermes format:

- the system prompt gets ``# Tools`` and one JSON schema per line between ``<tools>`` and ``</tools>``,
  with the instruction to answer each call as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
- the model's calls are parsed from those blocks (:func:`trace_envs.core.parse_action` at inference, TRL's
  response parser in GRPO training), and tool results come back as ``<tool_response>`` blocks in a user turn.

The turn markup is ChatML either way, so the model's turns look as they did in its own template; only the
system prompt changes. The same substitution (:func:`adapt_tool_template`) runs in the HF client, the
router, the SFT warm-up and GRPO training, so training sees exactly what inference sees. A template that
renders tools (Qwen3's) is left byte for byte as it is. Any other template without tools is refused with
one line naming the fix.
"""

from __future__ import annotations

from typing import Any

PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "probe_tool_zq",
        "description": "Probe tool.",
        "parameters": {"type": "object", "properties": {"x": {"type": "string", "description": "x"}}, "required": []},
    },
}
PROBE_MESSAGES = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
CHATML_MARKERS = ("<|im_start|>", "<|im_end|>")
REPLACEMENT = "trl-qwen3"
"""What ``trace_source.json`` and the logs call the substituted template."""


def _render(tokenizer: Any, tools: list[dict[str, Any]] | None) -> str:
    return str(tokenizer.apply_chat_template(PROBE_MESSAGES, tools=tools, add_generation_prompt=True, tokenize=False))


def renders_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template shows tool schemas: the probe tool changes the rendered prompt."""
    return _render(tokenizer, [PROBE_TOOL]) != _render(tokenizer, None)


def tool_template_for(tokenizer: Any) -> str | None:
    """The chat template to use instead of the tokenizer's (``None``: its own renders tools)."""
    if tokenizer.chat_template is None or renders_tools(tokenizer):
        return None
    if not all(marker in str(tokenizer.chat_template) for marker in CHATML_MARKERS):
        raise ValueError(
            "the model's chat template ignores tools and is not ChatML: set tokenizer.chat_template to a template "
            "that renders the `tools` argument (e.g. trl.chat_template_utils.qwen3_chat_template)"
        )
    from trl.chat_template_utils import qwen3_chat_template

    return str(qwen3_chat_template)


def adapt_tool_template(tokenizer: Any) -> str | None:
    """Give the tokenizer a tool-rendering template if its own ignores tools (in place); returns the
    replacement's name, or ``None`` when the template was left as it is."""
    template = tool_template_for(tokenizer)
    if template is None:
        return None
    tokenizer.chat_template = template
    return REPLACEMENT


def training_template(tokenizer: Any) -> Any:
    """The chat template TRL trains this tokenizer with: its own where it already preserves prefixes and marks the
    assistant's tokens, else TRL's training variant of it (a ``ValueError`` names a template TRL cannot patch)."""
    from trl.chat_template_utils import get_training_chat_template

    return get_training_chat_template(tokenizer) or tokenizer.chat_template


def render_as_trained(tokenizer: Any) -> None:
    """Render conversations as GRPO and the SFT trainers do (in place). Qwen3's template, and the one
    :func:`adapt_tool_template` gives, drops the empty think block of every earlier assistant turn. TRL's training
    variant keeps it, because a training conversation only ever grows, so a model would otherwise be trained on
    one history and shown another. A template TRL cannot patch, or an install without TRL (where nothing was
    trained with it), leaves the template as it is."""
    try:
        tokenizer.chat_template = training_template(tokenizer)
    except (ValueError, ModuleNotFoundError):
        return
