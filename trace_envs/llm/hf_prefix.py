"""Prefix reuse for batched local generation: the key/value states of every finished request (its prompt and
answer) are kept, up to a token budget, and a later prompt that starts with the same tokens (the system prompt and
tools every episode shares, an episode's earlier turns) computes only the tokens after them, as vLLM's prefix
caching does. Prompts are long beside the answers, so this removes most of a prompt's computation."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .hf_cache import empty_cache, plain_layers


@dataclass
class _Prefix:
    ids: Any
    """The tokens (a numpy array) whose states ``layers`` holds."""
    layers: list[tuple[Any, Any]]
    """Per layer, the keys and values of those tokens: ``[heads, tokens, head_dim]`` each."""


class PrefixStore:
    """Key/value states of finished requests (prompt and answer), for later prompts that start with the same tokens;
    the least recently used go first once more than ``max_tokens`` tokens are held. ``min_reuse``: shorter common
    starts are computed afresh (not worth assembling a cache for)."""

    def __init__(self, max_tokens: int, min_reuse: int = 8):
        self.max_tokens, self.min_reuse = max_tokens, min_reuse
        self._entries: OrderedDict[int, _Prefix] = OrderedDict()
        self._held = 0
        self._next = 0
        self.reused_tokens = 0
        """Prompt tokens taken from the store instead of computed (for benchmarks)."""

    def longest(self, prompt: Sequence[int]) -> tuple[_Prefix | None, int]:
        """The entry sharing the longest start with ``prompt`` and that length (at most all but its last token,
        whose logits the model must compute); ``(None, 0)`` when none shares ``min_reuse`` tokens. The entry
        counts as used (it goes last in the eviction order)."""
        key, length = self.best(prompt)
        if key is None:
            return None, 0
        self._entries.move_to_end(key)
        self.reused_tokens += length
        return self._entries[key], length

    def best(self, prompt: Sequence[int]) -> tuple[int | None, int]:
        """The key of the entry sharing the longest start with ``prompt`` (all but its last token) and that
        length, without using it; ``(None, 0)`` below ``min_reuse``."""
        import numpy as np

        target = np.asarray(prompt[:-1], dtype=np.int64)
        best: tuple[int | None, int] = (None, 0)
        for key, entry in self._entries.items():
            n = min(len(target), len(entry.ids))
            differ = np.flatnonzero(target[:n] != entry.ids[:n])
            length = int(differ[0]) if differ.size else n
            if length >= self.min_reuse and length > best[1]:
                best = (key, length)
        return best

    def add(self, ids: Sequence[int], layers: list[tuple[Any, Any]]) -> None:
        """Keep the states of ``ids`` (dropping the least recently used entries beyond the budget)."""
        import numpy as np

        if not ids or len(ids) > self.max_tokens:
            return
        self._entries[self._next] = _Prefix(np.asarray(ids, dtype=np.int64), layers)
        self._next += 1
        self._held += len(ids)
        while self._held > self.max_tokens:
            _, dropped = self._entries.popitem(last=False)
            self._held -= len(dropped.ids)


def shared_start(prompts: Sequence[Sequence[int]]) -> int:
    """How many first tokens all ``prompts`` share (at most all but the shortest one's last token)."""
    first, limit = prompts[0], min(len(p) for p in prompts) - 1
    length = 0
    while length < limit and all(p[length] == first[length] for p in prompts):
        length += 1
    return length


def row_states(cache: Any, row: int, mask: Any) -> list[tuple[Any, Any]] | None:
    """One batch row's keys and values, per layer, without its padding; ``None`` for a cache that does not hold
    every position in plain per-layer tensors (:func:`plain_layers`): nothing is kept then."""
    layers = plain_layers(cache)
    if layers is None or any(layer.keys.shape[-2] != len(mask) for layer in layers):
        return None
    real = mask.bool()
    return [(layer.keys[row][:, real, :].clone(), layer.values[row][:, real, :].clone()) for layer in layers]


def prefix_cache(model: Any, reused: Sequence[tuple[_Prefix | None, int]], device: str) -> Any:
    """A cache holding each row's reused states, left-padded to the longest (``None`` when no row reuses any)."""
    import torch

    width = max(length for _, length in reused)
    sample = next((entry for entry, length in reused if entry is not None and length), None)
    if sample is None or width == 0:
        return None
    cache = empty_cache(model)
    for layer, (keys, _) in enumerate(sample.layers):
        shape = (len(reused), keys.shape[0], width, keys.shape[2])
        batch_keys = torch.zeros(shape, dtype=keys.dtype, device=device)
        batch_values = torch.zeros(shape, dtype=keys.dtype, device=device)
        for row, (entry, length) in enumerate(reused):
            if entry is not None and length:
                batch_keys[row, :, width - length :, :] = entry.layers[layer][0][:, :length, :]
                batch_values[row, :, width - length :, :] = entry.layers[layer][1][:, :length, :]
        cache.update(batch_keys, batch_values, layer)
    return cache
