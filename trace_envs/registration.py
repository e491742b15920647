"""Deprecated for one release: registration (``register_envs``, ``env_class``, ``list_capability_envs`` and the
names it re-exported) moved to :mod:`trace_envs.registry`; importing this module warns, and each name is looked
up there."""

from __future__ import annotations

import warnings
from types import ModuleType

from trace_envs.registry import envs as _envs
from trace_envs.registry import sources as _sources
from trace_envs.registry import targets as _targets
from trace_envs.registry.envs import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.sources import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.targets import *  # noqa: F403 - the names it re-exports

_HOMES: tuple[ModuleType, ...] = (_envs, _sources, _targets)

warnings.warn(
    "trace_envs.registration is deprecated and will be removed in the next release: use trace_envs.registry",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> object:
    """``name`` (a private one: the public ones are re-exported above) from its new home."""
    for module in _HOMES:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
