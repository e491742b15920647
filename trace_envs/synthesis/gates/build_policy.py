"""Static-gate rules against names and templates built at run time, which no AST check of literals can read.

Issue 34's modules got a ``__str__`` defined and a format template walking attributes past the gate by
building the names at run time: ``type("S", (str,), {"_" * 2 + "str" + "_" * 2: f})``, the functional
``Enum("E", {...})`` API (whose dunder "members" become class attributes), a parameter named ``setattr``,
and ``("{0." + "modules}").format(m)``. So:

- ``type`` is called with one argument only, and used as a value only as ``isinstance``/``issubclass``'s type
  or in ``type[...]``; an enum is declared with a ``class`` statement, never built by a call;
- ``getattr``, ``setattr``, ``delattr`` and ``hasattr`` are never rebound (a parameter of that name hides
  which function a call runs, and switched the computed-name rule off);
- ``.format`` is taken only of a template the gate can trace to string literals (each checked for fields that
  walk attributes), and no literal is a fragment of a format field (``"{0."``), which only a template built
  at run time would complete.

What is still built at run time (``chr(123)``, ``str({})``) is the box's business: this gate is one layer of
defence, never the boundary.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator

from .ast_names import snippet
from .reports import Finding
from .scopes import bound_names

ATTRIBUTE_BUILTINS = ("getattr", "setattr", "delattr", "hasattr")
ENUM_FACTORIES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
TYPE_CHECKS = ("isinstance", "issubclass")
INSPECTIONS = frozenset(
    {"startswith", "endswith", "strip", "lstrip", "rstrip", "find", "rfind", "index", "rindex", "count"}
)
"""String methods that only look for a text: a lone brace passed to them builds nothing (``action.startswith("{")``)."""
PICKS = frozenset({"choice", "get", "pop"})
"""Methods that return one of a container's own values (``rng.choice(TEMPLATES)``, ``TABLE.get(key)``)."""
CLASS_FIX = "Define the class with a class statement, with every method and attribute written out by name."
FORMAT_FIX = (
    "Format a template written as one string literal (or picked from a table of literals), with plain named fields."
)


def build_findings(tree: ast.AST, source: str, builtins: set[int]) -> list[Finding]:
    """Every run-time-building finding in ``tree``; ``builtins`` holds the ``id()`` of the name loads that are
    the builtins (:func:`~.scopes.builtin_loads`)."""
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = list(_shadowed_attribute_builtins(tree, source))
    found += _classes_built(tree, source, builtins, parents)
    found += _templates(tree, source, parents)
    return found


def _finding(rule: str, node: ast.AST, source: str, message: str, fix: str) -> Finding:
    return Finding(
        rule=rule, line=getattr(node, "lineno", None), subject=snippet(source, node), message=message, fix=fix
    )


def _shadowed_attribute_builtins(tree: ast.AST, source: str) -> Iterator[Finding]:
    for node, name in bound_names(tree):
        if name in ATTRIBUTE_BUILTINS:
            yield _finding(
                "shadows-builtin",
                node,
                source,
                f"the name {name} is bound here, so a call {name}(...) no longer shows which function it runs.",
                f"Rename it; {name} always means the builtin in a capability env.",
            )


def _classes_built(tree: ast.AST, source: str, builtins: set[int], parents: dict[int, ast.AST]) -> Iterator[Finding]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name == "type" and (len(node.args) != 1 or node.keywords):
                yield _finding(
                    "class-built-at-run-time",
                    node,
                    source,
                    "type() with a name, bases and a namespace builds a class whose attributes (dunder methods "
                    "included) are named at run time, where no check can read them.",
                    CLASS_FIX,
                )
            elif name in ENUM_FACTORIES and len(node.args) + len(node.keywords) >= 2:
                yield _finding(
                    "class-built-at-run-time",
                    node,
                    source,
                    f"{name}(name, members) builds an enum at run time: a dunder among its members becomes a method.",
                    CLASS_FIX,
                )
        elif (
            isinstance(node, ast.Name)
            and node.id == "type"
            and id(node) in builtins
            and not _type_as_type(node, parents)
        ):
            yield _finding(
                "class-built-at-run-time",
                node,
                source,
                "type used as a value can be called later with a name, bases and a namespace built at run time.",
                "Call type(obj) directly, or test with isinstance(obj, type).",
            )


def _type_as_type(node: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """``type`` called, subscripted (``type[X]``), in an annotation, or the class argument of
    ``isinstance``/``issubclass``."""
    if _in_annotation(node, parents):
        return True
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return True
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return True
    if isinstance(parent, ast.Tuple):
        parent = parents.get(id(parent))
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in TYPE_CHECKS
        and node not in parent.args[:1]
    )


def _format_of(node: ast.AST) -> ast.expr | None:
    """The template whose ``format`` method ``node`` takes: ``template.format`` or ``getattr(template, "format")``."""
    if isinstance(node, ast.Attribute) and node.attr == "format":
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ATTRIBUTE_BUILTINS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and node.args[1].value == "format"
    ):
        return node.args[0]
    return None


def _in_annotation(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether ``node`` is (part of) an annotation or a generic's parameter (``dict[str, type]``)."""
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.arg) or (isinstance(parent, ast.AnnAssign) and parent.annotation is child):
            return True
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) and parent.returns is child:
            return True
        if isinstance(parent, ast.Subscript) and parent.slice is child:
            return True
        if not isinstance(parent, ast.Subscript | ast.Tuple | ast.BinOp | ast.Attribute):
            return False
        child, parent = parent, parents.get(id(parent))
    return False


def _templates(tree: ast.AST, source: str, parents: dict[int, ast.AST]) -> Iterator[Finding]:
    literal_names = _literal_names(tree)
    for node in ast.walk(tree):
        template = _format_of(node)
        if template is not None and not _traceable(template, literal_names):
            yield _finding(
                "format-reach",
                node,
                source,
                "a format template the gate cannot trace to string literals may be built at run time, with "
                "fields that walk attributes ({0.__class__...}).",
                FORMAT_FIX,
            )
        elif isinstance(node, ast.Constant) and _fragment(node.value) and not _only_inspected(node, parents):
            yield _finding(
                "format-fragment",
                node,
                source,
                f"the string {str(node.value)[:40]!r} holds part of a format field ('{{' or '}}' unpaired), "
                "which only a template built at run time would complete.",
                FORMAT_FIX + " Write a literal brace as '{{' or '}}'.",
            )


def _only_inspected(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """A docstring, a comparison's operand or an argument of a :data:`INSPECTIONS` method: text that is looked
    for or kept as documentation, never joined into another string."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Tuple):  # startswith(("{", "["))
        parent = parents.get(id(parent))
    if isinstance(parent, ast.Expr | ast.Compare):
        return True
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in INSPECTIONS
        and parent.func.value is not node
    )


def _fragment(text: object) -> bool:
    """Whether ``text`` is a string that is not a valid ``str.format`` template although it holds a brace."""
    if not isinstance(text, str) or ("{" not in text and "}" not in text):
        return False
    try:
        list(string.Formatter().parse(text))
    except ValueError:
        return True
    return False


def _literal_names(tree: ast.AST) -> set[str]:
    """Names every binding of which, anywhere in the module, is a traceable template or table of them."""
    bindings: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bindings.setdefault(node.target.id, []).append(node.value)
    for _, name in _other_bindings(tree):
        bindings.setdefault(name, []).append(None)
    names: set[str] = set()
    changed = True
    while changed:  # names bound to other literal names
        changed = False
        for name, values in bindings.items():
            if name not in names and all(v is not None and _traceable(v, names) for v in values):
                names.add(name)
                changed = True
    return names


def _other_bindings(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Bindings that are not a plain ``name = value`` (loop targets, parameters, augmented assignments, ...)."""
    plain = {
        id(target)
        for node in ast.walk(tree)
        for target in (node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)])
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(target, ast.Name)
    }
    for node, name in bound_names(tree):
        if id(node) not in plain:
            yield node, name


def _traceable(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` evaluates to a string literal of the module (or a container of them), as far as the AST
    shows: literals, f-strings (their parts are literals; what they interpolate is a value, not a template of the
    gate's concern only when it holds no brace: see :func:`_fragment`), names bound only to such, and picks from
    such containers."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | int | float | bool) or node.value is None
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_traceable(element, names) for element in node.elts)
    if isinstance(node, ast.Dict):
        return all(_traceable(value, names) for value in node.values)
    if isinstance(node, ast.Subscript):
        return _traceable(node.value, names)
    if isinstance(node, ast.IfExp):
        return _traceable(node.body, names) and _traceable(node.orelse, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PICKS:
        if node.func.attr == "choice":
            return len(node.args) == 1 and not node.keywords and _traceable(node.args[0], names)
        return _traceable(node.func.value, names) and all(_traceable(a, names) for a in node.args[1:])
    return False
