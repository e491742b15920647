"""Target benchmarks run as Gymnasium episodes (tau2-bench airline and retail, the device scenarios), each one
registered :class:`~trace_envs.registry.targets.Target` (see :mod:`trace_envs.registry.targets`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` that imports an exported name's submodule (``exports``: name ->
    submodule) on first use, so that the registry importing a target's module stays cheap."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{module}"), name)

    return __getattr__
