"""The contract package hands an env module nothing that reaches modules, imports by string or opens files.

An env module (LLM-written ones included) imports from ``trace_envs.core``, and the synthesis static gate
allows exactly ``trace_envs.core.__all__``. So no public attribute of ``trace_envs.core`` or of any of its
modules may be a module object (``importlib``, ``jinja2``, ``numpy`` …), a callable that imports by string or
a way to files (``open``, ``Path``); ``__all__`` lists exactly the package's public names, and core's source
never imports by string.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import io
import os
import pathlib
import pkgutil
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium
import gymnasium.envs.registration
import pydantic

import trace_envs.core

IMPORTS_BY_STRING: tuple[Any, ...] = (
    importlib.import_module,
    importlib.__import__,
    importlib.util.find_spec,
    importlib.util.module_from_spec,
    builtins.__import__,
    builtins.eval,
    builtins.exec,
    pkgutil.resolve_name,
    typing.get_type_hints,
    gymnasium.make,
    gymnasium.make_vec,
    gymnasium.register,
    gymnasium.spec,
    gymnasium.envs.registration.load_env_creator,
    pydantic.ImportString,
)
"""Callables that import (or evaluate) a name given as a string."""
FILE_ACCESS: tuple[Any, ...] = (builtins.open, io.open, pathlib.Path, pathlib.PurePath, os.open)
"""Callables that reach the file system (an env module has no business there)."""

STRING_IMPORT_NAMES = {
    "importlib", "__import__", "import_module", "resolve_name", "ImportString", "load_env_creator",
    "eval", "exec", "make", "make_vec", "register",
}  # fmt: skip
"""Names whose use in core's source means an import by string (``gym.make`` and ``gym.register`` too)."""


def core_modules() -> list[ModuleType]:
    """``trace_envs.core`` and every module in it."""
    found = [trace_envs.core]
    for info in pkgutil.walk_packages(trace_envs.core.__path__, "trace_envs.core."):
        found.append(importlib.import_module(info.name))
    return found


def public_attributes(module: ModuleType) -> Iterator[tuple[str, Any]]:
    """Attributes code can name (pytest's assertion rewriting adds ``@py_builtins``, which no code can)."""
    for name in sorted(vars(module)):
        if name.isidentifier() and not name.startswith("_"):
            yield f"{module.__name__}.{name}", getattr(module, name)


def holes(modules: list[ModuleType]) -> list[str]:
    """Every public attribute that is a module (other than core's own), a callable importing by string, or a
    way to the file system."""
    own = {module.__name__ for module in core_modules()}
    found = []
    for module in modules:
        for where, value in public_attributes(module):
            if isinstance(value, ModuleType) and value.__name__ not in own:
                found.append(f"{where} is the module {value.__name__}")
            elif any(value is importer for importer in IMPORTS_BY_STRING):
                found.append(f"{where} imports by string ({getattr(value, '__name__', value)!r})")
            elif any(value is opener for opener in FILE_ACCESS):
                found.append(f"{where} reaches files ({getattr(value, '__name__', value)!r})")
    return found


def string_imports_in_source(path: Path) -> list[str]:
    """Uses of the import-by-string machinery in one source file (``STRING_IMPORT_NAMES``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        else:
            continue
        found += [f"{path.name}:{node.lineno} uses {n}" for n in names if n.split(".")[0] in STRING_IMPORT_NAMES]
    return found


def test_no_public_attribute_of_core_is_a_module_or_imports_by_string() -> None:
    assert not holes(core_modules()), "\n".join(holes(core_modules()))


def test_core_source_never_imports_by_string() -> None:
    problems = [
        p for path in sorted(Path(trace_envs.core.__file__).parent.glob("*.py")) for p in string_imports_in_source(path)
    ]
    assert not problems, "\n".join(problems)


def test_all_lists_exactly_the_contract() -> None:
    submodules = {info.name for info in pkgutil.iter_modules(trace_envs.core.__path__)}
    public = {name for name, _ in public_attributes(trace_envs.core)} - {f"trace_envs.core.{m}" for m in submodules}
    public = {name.removeprefix("trace_envs.core.") for name in public}
    assert sorted(trace_envs.core.__all__) == sorted(public)
    assert len(set(trace_envs.core.__all__)) == len(trace_envs.core.__all__)


def test_the_checks_catch_a_hole(tmp_path: Path) -> None:
    leaky = ModuleType("leaky")
    leaky.importlib, leaky.jinja2, leaky.load = importlib, typing, importlib.import_module  # type: ignore[attr-defined]
    leaky.make, leaky.Path = gymnasium.make, pathlib.Path  # type: ignore[attr-defined]
    assert holes([leaky]) == [
        "leaky.Path reaches files ('Path')",
        "leaky.importlib is the module importlib",
        "leaky.jinja2 is the module typing",
        "leaky.load imports by string ('import_module')",
        "leaky.make imports by string ('make')",
    ]
    source = tmp_path / "leaky.py"
    source.write_text("import importlib as _i\n\ndef get(name):\n    return _gym.make(name)\n", encoding="utf-8")
    assert string_imports_in_source(source) == ["leaky.py:1 uses importlib", "leaky.py:4 uses make"]
