"""Async vector envs for text spaces: :class:`~trace_envs.core.UnicodeText` through shared memory as UTF-8 bytes.

Gymnasium's shared-memory path for ``Text`` (``AsyncVectorEnv(shared_memory=True)``, the default of
``make_vec(..., "async")``) stores charset indices, so any other character is silently dropped. These
handlers ship UTF-8 bytes instead; ``import trace_envs`` registers them (as it does the env ids a vector env
is made from), so the env contract itself carries no multiprocessing or numpy plumbing.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from .core.spaces import UnicodeText

_HEADER_BYTES = 4


def _slot_bytes(space: UnicodeText) -> int:
    """Bytes one value takes in shared memory: its length header, then up to four UTF-8 bytes per character."""
    return _HEADER_BYTES + 4 * space.max_length


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array("B", n * _slot_bytes(space))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    data = value.encode("utf-8")
    slot = _slot_bytes(space)
    buffer = np.frombuffer(shared_memory.get_obj(), dtype=np.uint8)
    start = index * slot
    buffer[start : start + _HEADER_BYTES] = np.frombuffer(len(data).to_bytes(_HEADER_BYTES, "little"), np.uint8)
    buffer[start + _HEADER_BYTES : start + _HEADER_BYTES + len(data)] = np.frombuffer(data, np.uint8)


class LiveTextBatch(Sequence[str]):
    """Strings read from shared memory each time they are accessed.

    ``AsyncVectorEnv`` reads its observation buffer once, at construction, and relies on the
    result being a live view (true for numpy arrays). A tuple of strings would be a stale
    snapshot, so this sequence decodes the current bytes on access; copying it (``deepcopy``,
    which ``AsyncVectorEnv`` does by default) gives a plain tuple.
    """

    def __init__(self, space: UnicodeText, shared_memory: Any, n: int):
        self._space, self._memory, self._n = space, shared_memory, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(index)
        slot = _slot_bytes(self._space)
        buffer = np.frombuffer(self._memory.get_obj(), dtype=np.uint8)
        start = (index % self._n) * slot
        size = int.from_bytes(buffer[start : start + _HEADER_BYTES].tobytes(), "little")
        return buffer[start + _HEADER_BYTES : start + _HEADER_BYTES + size].tobytes().decode("utf-8")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> LiveTextBatch:
    return LiveTextBatch(space, shared_memory, n)
