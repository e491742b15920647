"""The text a module's string expressions evaluate to when that is known without running it, so the leakage
guard sees an id split across literals (``"#W12" + "34567"``, ``f"#W{'12'}34567"``, ``"".join(["#W12",
"34567"])``, ``PREFIX + "34567"`` with ``PREFIX = "#W12"`` bound once) as the whole id.

Folding covers ``+`` of strings, ``str * int`` (up to :data:`MAX_CHARS`), f-strings whose fields fold,
``sep.join([...])`` of a list or tuple that folds, ``chr(int)``, and names bound exactly once in the
module to something that folds. Elements of a list or tuple of strings are also joined without and with
a space (pieces that code joins at run time). What depends on run time values is not seen here; the
generated-text scan (:func:`~trace_envs.synthesis.gates.leakage.scan_generated_texts`) sees the result.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

MAX_CHARS = 10_000
"""Longest folded text (``"x" * 10**9`` is not built)."""
UNKNOWN = "\x00"
"""Stands for a part whose value is not known: it breaks words and ids."""


class _Folder:
    def __init__(self, tree: ast.AST):
        stores = Counter(
            target.id
            for node in ast.walk(tree)
            for target in _targets(node)
            if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)
        )
        self.bound = {
            node.targets[0].id: node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and stores[node.targets[0].id] == 1
        }
        self.resolving: set[str] = set()

    def fold(self, node: ast.expr) -> str | None:
        """The string ``node`` evaluates to, or ``None`` when it is not known statically."""
        value = self._value(node)
        return value if isinstance(value, str) and len(value) <= MAX_CHARS else None

    def _value(self, node: ast.expr) -> str | int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.JoinedStr):
            return "".join(self._field(part) for part in node.values)
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _name(self, name: str) -> str | int | None:
        if name not in self.bound or name in self.resolving:
            return None
        self.resolving.add(name)
        try:
            return self._value(self.bound[name])
        finally:
            self.resolving.discard(name)

    def _binop(self, node: ast.BinOp) -> str | int | None:
        left, right = self._value(node.left), self._value(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
            return left + right if len(left) + len(right) <= MAX_CHARS else None
        if isinstance(node.op, ast.Mult):
            text, times = (left, right) if isinstance(left, str) else (right, left)
            if isinstance(text, str) and isinstance(times, int) and len(text) * max(times, 0) <= MAX_CHARS:
                return text * times
        return None

    def _field(self, part: ast.expr) -> str:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        if isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion in (-1, 115):
            value = self._value(part.value)
            if value is not None:
                return str(value)
        return UNKNOWN

    def _call(self, node: ast.Call) -> str | None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "chr" and len(node.args) == 1:
            code = self._value(node.args[0])
            return chr(code) if isinstance(code, int) and 0 <= code < 0x110000 else None
        if isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1:
            separator = self._value(func.value)
            items = self.items(node.args[0])
            if isinstance(separator, str) and items is not None:
                return separator.join(items)
        return None

    def items(self, node: ast.expr) -> list[str] | None:
        """The folded strings of a list or tuple (a name bound to one too), or ``None``."""
        if isinstance(node, ast.Name) and node.id in self.bound:
            node = self.bound[node.id]
        if not isinstance(node, ast.List | ast.Tuple):
            return None
        values = [self.fold(element) for element in node.elts]
        if any(value is None for value in values):
            return None
        return [value for value in values if value is not None]


def _targets(node: ast.AST) -> list[ast.expr]:
    """Every name a statement binds (assignments, loops, ``with ... as``, comprehensions)."""
    if isinstance(node, ast.Assign):
        return [element for target in node.targets for element in ast.walk(target) if isinstance(element, ast.expr)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor | ast.comprehension):
        return [element for element in ast.walk(node.target) if isinstance(element, ast.expr)]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [element for element in ast.walk(node.optional_vars) if isinstance(element, ast.expr)]
    return []


def folded_texts(tree: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """Every string expression that folds to more than its own literals say, with its node: concatenations,
    f-strings, joins and ``chr`` (through names bound once); and each list or tuple of strings joined."""
    folder = _Folder(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp | ast.JoinedStr | ast.Call):
            text = folder.fold(node)
            if text is not None:
                yield node, text
        elif isinstance(node, ast.List | ast.Tuple):
            items = folder.items(node)
            if items and len(items) > 1:
                yield node, "".join(items)
                yield node, " ".join(items)
