"""Deprecated for one release: the capability registry moved to :mod:`trace_envs.registry.capabilities`; importing
this module warns, and each name is looked up there."""

from __future__ import annotations

from trace_envs.registry import capabilities as _capabilities
from trace_envs.registry.capabilities import *  # noqa: F403 - the names it re-exports
from trace_envs.registry.moved import moved

__getattr__ = moved("trace_envs.capabilities", "trace_envs.registry.capabilities", _capabilities)
