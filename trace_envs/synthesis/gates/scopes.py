"""Which names of a module's AST are the builtins, resolved scope by scope as Python does.

A policy rule about a builtin (``getattr`` with a computed name, ``hash``, ``type`` with three arguments) must
not be switched off because some other function has a parameter or a local of the same name: issue 34's
module named a parameter ``getattr`` in one function, and the gate, which pooled the bound names of the whole
module, stopped checking ``getattr`` everywhere. Here a load is the builtin exactly when no enclosing scope
(its own function, enclosing functions, the module; a class body only for loads directly in it) binds it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class _Scope:
    node: ast.AST
    is_class: bool
    bound: set[str] = field(default_factory=set)
    parent: _Scope | None = None


def builtin_loads(tree: ast.AST) -> set[int]:
    """The ``id()`` of every ``ast.Name`` load in ``tree`` that no enclosing scope binds (a builtin, or undefined)."""
    found: set[int] = set()
    _resolve(tree, _scope_of(tree, None), found)
    return found


def bound_names(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every binding of a name in ``tree``, with the node that binds it (assignment targets, parameters,
    ``def``/``class`` names, import aliases, ``except ... as``, match captures)."""
    for node in ast.walk(tree):
        yield from ((node, name) for name in _binds(node))


def _binds(node: ast.AST) -> list[str]:
    """The names ``node`` itself binds (not its children)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _scope_of(node: ast.AST, parent: _Scope | None) -> _Scope:
    """The scope ``node`` opens, with the names bound directly in it (nested scopes are not entered)."""
    scope = _Scope(node, isinstance(node, ast.ClassDef), parent=parent)
    for child in _own_nodes(node):
        scope.bound.update(_binds(child))
        if isinstance(child, ast.Global | ast.Nonlocal):
            scope.bound.difference_update(child.names)  # resolved where they are declared
    return scope


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes that belong to ``scope`` itself: its parameters and body, not the bodies of nested scopes (whose
    names, decorators and defaults do belong to it)."""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        yield from _parameters(scope.args)  # their defaults and annotations belong to the enclosing scope
        stack: list[ast.AST] = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    elif isinstance(scope, COMPREHENSIONS):
        stack = [scope.elt] if not isinstance(scope, ast.DictComp) else [scope.key, scope.value]
        for number, generator in enumerate(scope.generators):
            stack += [generator.target, *generator.ifs] + ([generator.iter] if number else [])
    else:
        stack = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        yield node
        stack += _children_in_scope(node)


def _children_in_scope(node: ast.AST) -> list[ast.AST]:
    """``node``'s children evaluated in ``node``'s own scope (for a nested scope: its decorators, defaults,
    bases and annotations, and the first iterable of a comprehension)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        args = node.args
        annotations = [a.annotation for a in _parameters(args) if a.annotation is not None]
        defaults = [*args.defaults, *[d for d in args.kw_defaults if d is not None]]
        return [*node.decorator_list, *defaults, *annotations, *([node.returns] if node.returns else [])]
    if isinstance(node, ast.Lambda):
        return [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    if isinstance(node, COMPREHENSIONS):
        return [node.generators[0].iter]
    return list(ast.iter_child_nodes(node))


def _parameters(args: ast.arguments) -> list[ast.arg]:
    every = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
    return [arg for arg in every if arg is not None]


def _resolve(node: ast.AST, scope: _Scope, found: set[int]) -> None:
    for child in _own_nodes(node) if node is scope.node else ():
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and not _is_bound(child.id, scope):
            found.add(id(child))
        if isinstance(child, (*SCOPES, *COMPREHENSIONS)) and child is not node:
            _resolve(child, _scope_of(child, scope), found)


def _is_bound(name: str, scope: _Scope) -> bool:
    """Whether ``name`` loaded in ``scope`` resolves to a binding of the module (class bodies are seen only from
    themselves, as in Python)."""
    current: _Scope | None = scope
    while current is not None:
        if name in current.bound and (current is scope or not current.is_class):
            return True
        current = current.parent
    return False
