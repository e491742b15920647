"""Load a script of ``benchmarks/`` as a module, so tests can call its functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.conftest import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as the module ``name`` (registered, so pydantic resolves its annotations)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
