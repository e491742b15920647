"""Static-gate rules against reaching code or data by the side door: dunder methods that run when the env
does not choose (``__del__``, ``__getattr__``), private attributes of objects that are not the module's
own, assignments into imported objects (``CapabilityEnv.verify = ...``), format strings whose fields walk
attributes or indexes (``"{0.sys}".format(m)``), ``format_map``,
and quoted annotations or forward references (pydantic evaluates them as code by name).
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator

from .allowlist import ALLOWED_DUNDER_METHODS, STDLIB_NAMES
from .ast_names import import_aliases, snippet
from .reports import Finding

DUNDER = re.compile(r"^__\w+__$")
OWN = ("self", "cls")
UNQUOTED = ("Literal",)
"""Subscripts whose string arguments are values, not annotations pydantic would evaluate."""
GENERICS = frozenset(
    STDLIB_NAMES["typing"] | STDLIB_NAMES["collections.abc"] | {"RootModel", "list", "dict", "set", "frozenset"}
) | {"tuple", "type"}
"""Type constructors whose string arguments are forward references, evaluated by name (``RootModel["..."]``)."""


def reach_findings(tree: ast.AST, source: str) -> list[Finding]:
    """Every side-door finding in ``tree``."""
    found: list[Finding] = []
    statements = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += _dunder_method(node)
            found += _annotations([*_arguments(node.args), node.returns], source)
        elif isinstance(node, ast.AnnAssign):
            found += _annotations([node.annotation], source)
        elif isinstance(node, ast.Subscript) and _head(node) in GENERICS:
            found += _annotations([node], source)
        elif isinstance(node, ast.Attribute):
            found += _attribute(node, source)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in statements:
            found += _format_fields(node, node.value, source)
    return found + _patches(tree, source)


def _patches(tree: ast.AST, source: str) -> list[Finding]:
    """Assignments into what the module imported (``CapabilityEnv.verify = ...``, ``TABLE["x"] = ...``,
    ``setattr(RETAIL, "policy", ...)``): they change the library for every env in the process."""
    imported = set(import_aliases(tree))
    found = []
    for node in ast.walk(tree):
        target: ast.expr | None = None
        if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            target = node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            target = node.args[0] if node.func.id in ("setattr", "delattr") else None
        root = _root(target) if target is not None else None
        if root is not None and root in imported:
            found.append(
                Finding(
                    rule="patches-import",
                    line=getattr(node, "lineno", None),
                    subject=snippet(source, node),
                    message=f"this changes {root}, which the module imported: every env in the process would see it.",
                    fix="Subclass or copy what you need and change your own object; never assign into an import.",
                )
            )
    return found


def _root(node: ast.expr) -> str | None:
    """The name at the root of ``a.b[c].d`` (``a``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dunder_method(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Finding]:
    if not DUNDER.match(node.name) or node.name in ALLOWED_DUNDER_METHODS:
        return []
    allowed = ", ".join(sorted(ALLOWED_DUNDER_METHODS))
    return [
        Finding(
            rule="dunder-method",
            line=node.lineno,
            subject=f"def {node.name}",
            message=f"{node.name} runs when the interpreter chooses (on collection, lookup, copy), not when the env is called.",
            fix=f"Remove it; a capability env may define only these dunder methods: {allowed}.",
        )
    ]


def _attribute(node: ast.Attribute, source: str) -> list[Finding]:
    attr = node.attr
    if attr == "format_map":
        return [
            Finding(
                rule="format-reach",
                line=node.lineno,
                subject=snippet(source, node),
                message="format_map looks fields up in a mapping the format string chooses.",
                fix="Use an f-string or str.format with plain named fields.",
            )
        ]
    if not attr.startswith("_") or DUNDER.match(attr) or _own(node.value):
        return []
    return [
        Finding(
            rule="private-attribute",
            line=node.lineno,
            subject=snippet(source, node),
            message=f"{attr} is a private attribute of an object the module does not own.",
            fix="Use the object's public API; private attributes are only for self and cls.",
        )
    ]


def _own(value: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the module's own objects."""
    if isinstance(value, ast.Name):
        return value.id in OWN
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def _format_fields(node: ast.Constant, text: str, source: str) -> list[Finding]:
    reaching = [name for name in _field_names(text) if "." in name or "[" in name]
    if not reaching:
        return []
    return [
        Finding(
            rule="format-reach",
            line=node.lineno,
            subject=snippet(source, node),
            message=f"the format field {{{reaching[0]}}} walks attributes or indexes when the string is formatted.",
            fix="Format plain named fields ({name}) and compute the values before formatting.",
        )
    ]


def _field_names(text: str) -> Iterator[str]:
    """The field names of ``text`` read as a ``str.format`` template, nested specs included (none if it is not one)."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError:
        return
    for _, name, spec, _ in parts:
        if name is not None:
            yield name
        if spec:
            yield from _field_names(spec)


def _arguments(args: ast.arguments) -> list[ast.expr | None]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [arg.annotation for arg in every if arg is not None]


def _annotations(annotations: list[ast.expr | None], source: str) -> list[Finding]:
    found = []
    for annotation in annotations:
        for quoted in _quoted(annotation):
            found.append(
                Finding(
                    rule="quoted-annotation",
                    line=quoted.lineno,
                    subject=snippet(source, quoted),
                    message="a quoted annotation is code that pydantic and typing evaluate by name at run time.",
                    fix="Write the annotation unquoted (the module starts with from __future__ import annotations).",
                )
            )
    return found


def _quoted(node: ast.expr | None) -> Iterator[ast.Constant]:
    """String constants of an annotation, except the values of ``Literal[...]`` and the metadata of
    ``Annotated[type, ...]``."""
    if node is None:
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            yield node
        return
    if isinstance(node, ast.Subscript):
        head = _head(node)
        if head in UNQUOTED:
            return
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Annotated":
            elements = elements[:1]
        yield from _quoted(node.value)
        for element in elements:
            yield from _quoted(element)
        return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield from _quoted(child)


def _head(node: ast.Subscript) -> str:
    """The name a subscript is taken of (``Literal`` of ``typing.Literal[...]``)."""
    value = node.value
    return value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", "")
