"""Deprecated for one release: the target registry moved to :mod:`trace_envs.registry.targets`
(``registered_domains`` is now ``target_domains``); importing this module warns, and each name is looked up
there."""

from __future__ import annotations

from trace_envs.registry import envs as _envs
from trace_envs.registry import targets as _targets
from trace_envs.registry.moved import moved
from trace_envs.registry.targets import *  # noqa: F403 - the names it re-exports

registered_domains = _targets.target_domains

__getattr__ = moved("trace_envs.targets.registry", "trace_envs.registry.targets", _targets, _envs)
