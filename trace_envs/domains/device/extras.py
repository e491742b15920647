"""Lazy imports of the ``device`` extra (pint, geopy), so that ``import trace_envs`` never loads them.

A missing library is a setup problem, not an agent mistake: :class:`MissingExtraError` is re-raised by
``DeviceToolset.execute`` instead of being shown to the agent as the tool's result.
"""

from __future__ import annotations

import importlib
from types import ModuleType

INSTALL_HINT = 'pip install "trace-envs[device]"'


class MissingExtraError(ModuleNotFoundError):
    """A device tool needs a library of the ``device`` extra that is not installed."""


def require(module: str, tool: str) -> ModuleType:
    """``import module``, or :class:`MissingExtraError` naming the tool and the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = module.split(".")[0]
        raise MissingExtraError(
            f"{tool} needs {package}, which is not installed: {INSTALL_HINT}", name=package
        ) from exc
