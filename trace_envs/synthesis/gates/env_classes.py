"""Which classes of a module are envs, read from its AST without running it: the one place that resolves a
class's bases, for every check that asks (the contract gate, and ``validate``'s "is this an env at all?").

A base counts through the forms a module writes it in: a generic form (``CapabilityEnv[MyKnobs]``) as its
origin, an in-module env class, or a module-level alias of either (``Base = CapabilityEnv[MyKnobs]``). What
counts as an env base from outside the module is the caller's question (``is_env``): the contract asks for
the core contract or a trusted env class; ``validate``, before it knows the target, for any ``…Env``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EnvClasses:
    """A module's env classes in source order, and each one's in-module env parent (None: an outside base)."""

    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)

    def leaves(self) -> list[str]:
        """The env classes no other env class of the module derives from (an env module has exactly one)."""
        used_as_base = {parent for parent in self.parents.values() if parent is not None}
        return [name for name in self.classes if name not in used_as_base]

    def chain(self, leaf: str) -> list[ast.ClassDef]:
        """``leaf`` followed by its in-module env ancestors, nearest first."""
        found: list[ast.ClassDef] = []
        current: str | None = leaf
        while current is not None:
            found.append(self.classes[current])
            current = self.parents[current]
        return found


def base_origin(base: ast.expr) -> ast.expr:
    """``CapabilityEnv`` for ``CapabilityEnv[MyKnobs]`` (and for nested subscripts): the class a generic form names."""
    while isinstance(base, ast.Subscript):
        base = base.value
    return base


def env_classes(tree: ast.Module, is_env: Callable[[ast.expr], bool]) -> EnvClasses:
    """The module's env classes: those with a base that ``is_env`` accepts (given the base's origin, see
    :func:`base_origin`) or that is an env class or alias defined above it in the module."""
    found = EnvClasses()
    names: dict[str, str | None] = {}  # module-level name -> the env class it stands for (None: an outside base)
    for node in tree.body:  # names are bound above their use, so one pass in order
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                resolved = _resolve(base, names, is_env)
                if resolved is not None:
                    found.classes[node.name], found.parents[node.name] = node, resolved[0]
                    names[node.name] = node.name
                    break
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            resolved = _resolve(node.value, names, is_env)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and resolved is not None:
                    names[target.id] = resolved[0]
    return found


def _resolve(
    base: ast.expr, names: dict[str, str | None], is_env: Callable[[ast.expr], bool]
) -> tuple[str | None] | None:
    """``(the in-module env class base stands for, or None for an outside env base)``, or None: not an env base."""
    origin = base_origin(base)
    if isinstance(origin, ast.Name) and origin.id in names:
        return (names[origin.id],)
    return (None,) if is_env(origin) else None
