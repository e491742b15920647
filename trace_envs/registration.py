"""Deprecated for one release: registration (``register_envs``, ``env_class``, ``list_capability_envs`` and the
names it re-exported) moved to :mod:`trace_envs.registry`; importing this module warns, and each name is looked
up there."""

from __future__ import annotations

from trace_envs.registry import envs as _envs
from trace_envs.registry import sources as _sources
from trace_envs.registry import targets as _targets
from trace_envs.registry.envs import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.moved import moved
from trace_envs.registry.sources import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.targets import *  # noqa: F403 - the names it re-exports

__getattr__ = moved("trace_envs.registration", "trace_envs.registry", _envs, _sources, _targets)
