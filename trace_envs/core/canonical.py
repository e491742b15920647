"""Canonical JSON and hashing: one byte string per value, so equal states hash equally anywhere."""

from __future__ import annotations

import hashlib as _hashlib
import json as _json
from typing import Any

from pydantic import BaseModel


def to_json_data(value: Any) -> Any:
    """Plain JSON data for a value: pydantic models are dumped in JSON mode, the rest kept."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, no NaN/inf, UTF-8 kept (``ensure_ascii=False``)."""
    return _json.dumps(
        to_json_data(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def canonical_hash(value: Any) -> str:
    """sha256 hex digest of :func:`canonical_json` of ``value``."""
    return _hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
