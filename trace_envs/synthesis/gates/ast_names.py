"""Resolve names in a module's AST to what its imports bind them to (``rng`` -> nothing, ``dt.now`` ->
``datetime.datetime.now``), so policy checks see through aliases without running the module; and parse
modules safely from several threads at once."""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator

_PARSE_LOCK = threading.RLock()
PARSE_ATTEMPTS = 5
"""Tries of one parse: CPython 3.11's spurious depth-mismatch error is retried (parsing is pure)."""


def parse_module(source: str, filename: str = "<module>") -> ast.Module:
    """``ast.parse``, one thread at a time: CPython before 3.12 keeps the AST builder's recursion depth in
    interpreter-wide state, so two threads converting trees at once (candidates validated in parallel)
    can fail with "SystemError: AST constructor recursion depth mismatch" when the GIL changes hands
    mid-conversion. Builders outside our lock (a library's ``inspect.signature`` of a builtin parses one)
    can still collide, so that error is retried a few times."""
    for _ in range(PARSE_ATTEMPTS - 1):
        try:
            with _PARSE_LOCK:
                return ast.parse(source, filename)
        except SystemError as exc:  # the lock cannot cover every tree builder of the process (a library's)
            if "recursion depth mismatch" not in str(exc):
                raise
    with _PARSE_LOCK:
        return ast.parse(source, filename)


def exclusive_ast() -> threading.RLock:
    """The (re-entrant) lock :func:`parse_module` holds, for other code that builds ASTs in a synthesis thread:
    the contract guide parses our sources, ``compile`` builds a tree, and a first import (of a kit module the
    allow-list reads) defines pydantic models, whose schema building parses signatures with ``ast``."""
    return _PARSE_LOCK


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> qualified name, for every ``import`` and ``from ... import`` anywhere in ``tree``.

    Rebinding a name later (``random = 3``) is not tracked: checks that use this err on the side of
    reporting, which is what a policy gate wants.
    """
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
    return aliases


def qualified_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` with ``a`` replaced by what it was imported as; ``None`` if the root is not an import."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = qualified_name(node.value, aliases)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def snippet(source: str, node: ast.AST, limit: int = 60) -> str:
    """The node's source text on one line, cut to ``limit`` characters."""
    text = ast.get_source_segment(source, node) or type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def string_literals(tree: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """Every string literal with the node to report it at. An f-string counts as one literal (its
    constant parts joined by spaces) reported at the f-string itself: on Python 3.11 the positions of
    the parts inside an f-string are wrong."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            inside.update(id(part) for part in parts)
            yield node, " ".join(str(part.value) for part in parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside:
            yield node, node.value
