"""Deprecated for one release: where envs come from (entry points, ``load_envs``, ``$TRACE_ENVS_PATH``) moved to
:mod:`trace_envs.registry.sources`, the manifest check to :mod:`trace_envs.registry.manifest`; importing this
module warns, and each name is looked up there (``SYNTHESIS_MANIFEST`` is ``MANIFEST``, ``SYNTHESIS_FORMAT``
``MANIFEST_FORMAT``)."""

from __future__ import annotations

import warnings
from types import ModuleType

from trace_envs.registry import manifest as _manifest
from trace_envs.registry import sources as _sources
from trace_envs.registry.manifest import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.sources import *  # noqa: F403 - the names it re-exports

_HOMES: tuple[ModuleType, ...] = (_sources, _manifest)
SYNTHESIS_MANIFEST = _manifest.MANIFEST
SYNTHESIS_FORMAT = _manifest.MANIFEST_FORMAT

warnings.warn(
    "trace_envs.plugins is deprecated and will be removed in the next release: use trace_envs.registry.sources",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> object:
    """``name`` (a private one: the public ones are re-exported above) from its new home."""
    for module in _HOMES:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
