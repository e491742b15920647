"""The static gate's name allow-list: every imported name is one of :mod:`.allowlist`'s, and a module object
is only ever the base of an allowed attribute.

So ``typing.sys``, ``dataclasses.builtins``, ``enum.bltns``, ``statistics.sys`` (attributes of allowed
modules that are not on the list), ``m = random`` or ``f(random)`` (a module used as a value, which
would take it out of sight of the name checks), ``random = x`` (a module name rebound) and
``from pydantic import ImportString`` are all refused, each with the line, what was seen and the fix.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .allowlist import (
    ALLOWED_STDLIB,
    CONTRACT,
    NAME_REASONS,
    allowed_names,
    is_allowed_module,
    is_allowed_submodule,
    under,
)
from .ast_names import snippet
from .reports import Finding

DEDICATED = ("random",)
"""Modules whose refused names have a rule of their own (global-rng), so this one stays quiet about them."""


@dataclass
class ImportPolicy:
    """Checks one module's imports and module names against the allow-list for the kit ``roots``."""

    source: str
    roots: tuple[str, ...]
    modules: dict[str, str] = field(default_factory=dict)
    """Local name -> the module it is bound to (``import a.b`` binds ``a``; ``from a import b`` of a module)."""
    findings: list[Finding] = field(default_factory=list)

    def add(self, node: ast.AST, rule: str, subject: str, message: str, fix: str) -> None:
        self.findings.append(
            Finding(rule=rule, line=getattr(node, "lineno", None), subject=subject, message=message, fix=fix)
        )

    def check(self, tree: ast.AST) -> list[Finding]:
        """Every finding of ``tree`` (imports first, then the uses of module names)."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                self._import_from(node, node.module)
        parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in self.modules:
                self._module_name(node, parents)
            elif isinstance(node, ast.arg) and node.arg in self.modules:
                self._rebound(node, node.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in self.modules:
                self._rebound(node, node.name)
        return self.findings

    # ----- imports ----------------------------------------------------------------------------
    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            bound = alias.name if alias.asname else alias.name.split(".")[0]
            self.modules[alias.asname or bound] = bound

    def _import_from(self, node: ast.ImportFrom, module: str) -> None:
        if not is_allowed_module(module, self.roots):
            return  # the forbidden-import rule reports it
        names = allowed_names(module, self.roots)
        for alias in node.names:
            if alias.name == "*":
                continue
            submodule = f"{module}.{alias.name}"
            if is_allowed_submodule(submodule, self.roots):
                self.modules[alias.asname or alias.name] = submodule
            elif alias.name not in names and module not in DEDICATED:
                self._not_allowed(node, module, alias.name)

    def _not_allowed(self, node: ast.AST, module: str, name: str) -> None:
        why = NAME_REASONS.get(name, "is not on the allow-list")
        if module == CONTRACT:
            fix = "Use only the contract's names: trace_envs.core.__all__, less the helpers that import by string."
        elif is_allowed_module(module, self.roots) and module.startswith("trace_envs"):
            fix = f"Use the kit's public names; {name} is not one of {module}'s."
        else:
            shown = ", ".join(sorted(allowed_names(module, self.roots))) or "none"
            why_allowed = f" ({ALLOWED_STDLIB[module]})" if module in ALLOWED_STDLIB else ""
            fix = f"Use only the allowed names of {module}{why_allowed}: {shown}."
        self.add(node, "name-not-allowed", f"{module}.{name}", f"{module}.{name} {why}.", fix)

    # ----- module names -----------------------------------------------------------------------
    def _module_name(self, node: ast.Name, parents: dict[int, ast.AST]) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._rebound(node, node.id)
            return
        module = self.modules[node.id]
        if not (is_allowed_module(module, self.roots) or self._on_the_way(module)):
            return  # a forbidden import: the forbidden-import rule reports it once, at the import
        current: ast.AST = node
        parent = parents.get(id(current))
        while isinstance(parent, ast.Attribute) and parent.value is current:
            step = f"{module}.{parent.attr}"
            if is_allowed_submodule(step, self.roots) or self._on_the_way(step):
                module, current, parent = step, parent, parents.get(id(parent))
                continue
            if parent.attr not in allowed_names(module, self.roots) and module not in DEDICATED:
                self._not_allowed(parent, module, parent.attr)
            return
        self.add(
            current,
            "module-as-value",
            snippet(self.source, current),
            f"the module {module} is used as a value, where the name checks can no longer follow it.",
            f"Import the names you need (from {module} import ...) and use them directly.",
        )

    def _on_the_way(self, module: str) -> bool:
        """A package on the way to a kit module (``trace_envs`` of ``trace_envs.core``)."""
        return any(under(root, (module,)) and root != module for root in self.roots)

    def _rebound(self, node: ast.AST, name: str) -> None:
        self.add(
            node,
            "module-rebound",
            name,
            f"{name} is the module {self.modules[name]}; binding the name again hides what it holds.",
            f"Give the new value another name, or import names from {self.modules[name]} instead of the module.",
        )
