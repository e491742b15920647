"""Deprecated for one release: the capability registry moved to :mod:`trace_envs.registry.capabilities`; importing
this module warns, and each name is looked up there."""

from __future__ import annotations

import warnings
from types import ModuleType

from trace_envs.registry import capabilities as _capabilities
from trace_envs.registry.capabilities import *  # noqa: F403 - the names it re-exports

_HOMES: tuple[ModuleType, ...] = (_capabilities,)

warnings.warn(
    "trace_envs.capabilities is deprecated and will be removed in the next release: use trace_envs.registry.capabilities",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> object:
    """``name`` (a private one: the public ones are re-exported above) from its new home."""
    for module in _HOMES:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
