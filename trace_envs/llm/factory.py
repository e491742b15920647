"""Build a client from a model spec string or a :class:`ModelConfig`."""

from __future__ import annotations

from typing import Any

from .client import BaseChatModel
from .spec import ModelConfig


def make_chat_model(spec: str | ModelConfig, **overrides: Any) -> BaseChatModel:
    """``anthropic:<model>``, ``openai:<base_url>#<model>`` or ``hf:<path>[@<adapter>]`` (or a config);
    ``overrides`` set :class:`ModelConfig` fields (``cache_dir``, ``timeout_s``, ``sampling`` …)."""
    config = ModelConfig.parse(spec, **overrides) if isinstance(spec, str) else spec.model_copy(update=overrides)
    if config.provider == "anthropic":
        from .anthropic_client import AnthropicChatModel

        return AnthropicChatModel(config)
    if config.provider == "openai":
        from .openai_client import OpenAIChatModel

        return OpenAIChatModel(config)
    from .hf_client import HFChatModel

    return HFChatModel(config)
