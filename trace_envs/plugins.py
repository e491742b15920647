"""Deprecated for one release: where envs come from (entry points, ``load_envs``, ``$TRACE_ENVS_PATH``) moved to
:mod:`trace_envs.registry.sources`, the manifest check to :mod:`trace_envs.registry.manifest`; importing this
module warns, and each name is looked up there (``SYNTHESIS_MANIFEST`` is ``MANIFEST``, ``SYNTHESIS_FORMAT``
``MANIFEST_FORMAT``)."""

from __future__ import annotations

from trace_envs.registry import manifest as _manifest
from trace_envs.registry import sources as _sources
from trace_envs.registry.manifest import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.moved import moved
from trace_envs.registry.sources import *  # noqa: F403 - the names it re-exports

SYNTHESIS_MANIFEST = _manifest.MANIFEST
SYNTHESIS_FORMAT = _manifest.MANIFEST_FORMAT

__getattr__ = moved("trace_envs.plugins", "trace_envs.registry.sources", _sources, _manifest)
