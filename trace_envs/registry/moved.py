"""The registry's old homes, kept for one release: each deprecated module warns once on import and forwards
every name it does not re-export to its new home, through the one helper here."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType


def moved(old: str, new: str, *homes: ModuleType) -> Callable[[str], object]:
    """Warn that the module ``old`` moved to ``new`` (at the line that imported it), and return the module
    ``__getattr__`` that looks a name up in ``homes``, in order (the private names a star import leaves out)."""
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release: use {new}", DeprecationWarning, stacklevel=3
    )

    def lookup(name: str) -> object:
        """``name`` from the first of the new homes that has it."""
        for module in homes:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return lookup
