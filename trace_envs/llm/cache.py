"""On-disk response cache: one JSON file per request, keyed by a content hash of (model spec,
messages, tools, sampling params), written atomically. Reruns of the same requests are free and
return exactly the same responses."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .base import ChatResponse

CACHE_FORMAT = 1


def cache_key(
    model: str, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]] | None, sampling: dict[str, Any]
) -> str:
    """sha256 of the canonical JSON (sorted keys, compact separators, UTF-8 kept) of everything that
    determines a response."""
    request = {"format": CACHE_FORMAT, "model": model, "messages": messages, "tools": tools or [], "sampling": sampling}
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """``<root>/<key[:2]>/<key>.json`` files. Safe for concurrent writers (atomic rename)."""

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return ChatResponse.model_validate(data)
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError, ValidationError):
            return None  # a damaged entry is a miss; it is overwritten by the next put

    def put(self, key: str, response: ChatResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(response.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0
