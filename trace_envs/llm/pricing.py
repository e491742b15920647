"""Token prices and cost accounting. A small default table (USD per million tokens, list prices when
written; check your provider) that users override with ``ModelConfig.prices`` or a JSON file named by
``$TRACE_ENVS_PRICES`` (``{"model-prefix": {"input": 3.0, "output": 15.0, ...}}``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .base import Usage


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(default=0.0, ge=0.0)
    output: float = Field(default=0.0, ge=0.0)
    cache_read: float | None = Field(default=None, ge=0.0, description="Default: 10% of input.")
    cache_write: float | None = Field(default=None, ge=0.0, description="Default: 125% of input.")

    def cost(self, usage: Usage) -> float:
        read = self.cache_read if self.cache_read is not None else self.input * 0.1
        write = self.cache_write if self.cache_write is not None else self.input * 1.25
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
        ) / 1_000_000


DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-4-5": Price(input=5.0, output=25.0),
    "claude-opus-4": Price(input=15.0, output=75.0),
    "claude-sonnet-4": Price(input=3.0, output=15.0),
    "claude-3-7-sonnet": Price(input=3.0, output=15.0),
    "claude-3-5-sonnet": Price(input=3.0, output=15.0),
    "claude-haiku-4": Price(input=1.0, output=5.0),
    "claude-3-5-haiku": Price(input=0.8, output=4.0),
    "gpt-4o-mini": Price(input=0.15, output=0.6, cache_read=0.075),
    "gpt-4o": Price(input=2.5, output=10.0, cache_read=1.25),
    "gpt-4.1-mini": Price(input=0.4, output=1.6, cache_read=0.1),
    "gpt-4.1": Price(input=2.0, output=8.0, cache_read=0.5),
}


class PriceTable:
    """Model-name prefix -> :class:`Price`; the longest matching prefix wins, unknown models cost 0."""

    def __init__(self, prices: Mapping[str, Price] | None = None):
        self.prices = dict(DEFAULT_PRICES if prices is None else prices)

    @classmethod
    def from_file(cls, path: str | Path, base: Mapping[str, Price] | None = None) -> PriceTable:
        """Default table updated with a JSON file's entries."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            extra = {name: Price.model_validate(value) for name, value in data.items()}
        except (OSError, json.JSONDecodeError, ValidationError, AttributeError) as exc:
            raise ValueError(
                f"price file {path}: expected JSON {{'<model prefix>': {{'input': 3.0, 'output': 15.0}}}} ({exc})"
            ) from None
        return cls({**(DEFAULT_PRICES if base is None else base), **extra})

    @classmethod
    def default(cls) -> PriceTable:
        """The built-in table, updated from ``$TRACE_ENVS_PRICES`` when set."""
        path = os.environ.get("TRACE_ENVS_PRICES")
        return cls.from_file(path) if path else cls()

    def lookup(self, model: str) -> Price | None:
        name = model.rsplit("/", 1)[-1]
        matches = [key for key in self.prices if name.startswith(key)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, usage: Usage) -> float:
        price = self.lookup(model)
        return price.cost(usage) if price is not None else 0.0
