"""Build a generator from its spec string: ``catalogue`` or a model spec."""

from __future__ import annotations

from typing import Any

from .catalogue import CatalogueGenerator
from .generators import CATALOGUE, Generator, ModelGenerator


def make_generator(spec: str, *, sampling: dict[str, Any] | None = None, **model_options: Any) -> Generator:
    """``catalogue`` or a model spec; ``model_options`` set :class:`~trace_envs.llm.ModelConfig` fields
    (``base_url``, ``api_key``, ``cache_dir``, ...). Raises ValueError naming the valid forms."""
    if spec == CATALOGUE:
        return CatalogueGenerator()
    from trace_envs.llm.factory import make_chat_model
    from trace_envs.llm.spec import ModelConfig

    try:
        config = ModelConfig.parse(spec, **model_options)
    except ValueError as exc:
        raise ValueError(f"generator: {exc}, or 'catalogue' (a shipped env, no model)") from None
    return ModelGenerator(make_chat_model(config), sampling)
