"""Small functions: no command body in ``trace_envs/cli`` over 60 lines (a command parses its options, calls one
library function and renders the result), and at most 10 such long bodies in the rest of the library. A body
is measured from its first statement after the docstring to its last line, so a command's options (in its
signature) and docstrings do not count."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "trace_envs"
MAX_LINES = 60
MAX_LONG_LIBRARY_FUNCTIONS = 10


def body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    body = function.body
    first = body[1] if len(body) > 1 and ast.get_docstring(function, clean=False) is not None else body[0]
    assert function.end_lineno is not None
    return function.end_lineno - first.lineno + 1


def long_functions(source: str, name: str) -> list[str]:
    """``name:function (N lines)`` for every function (nested ones included) whose body is over the limit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and body_lines(node) > MAX_LINES:
            found.append(f"{name}:{node.name} ({body_lines(node)} lines)")
    return found


def long_functions_under(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        found += long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    return found


def test_a_body_is_measured_after_the_docstring_and_without_the_signature() -> None:
    options = "".join(f"    option_{i}: int = {i},\n" for i in range(80))
    statements = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    source = f'def command(\n{options}) -> None:\n    """Doc.\n\n    More doc.\n    """\n{statements}'
    assert long_functions(source, "m") == []
    assert long_functions(source + "    return None\n", "m") == [f"m:command ({MAX_LINES + 1} lines)"]
    nested = (
        "def outer() -> None:\n    def inner() -> None:\n" + statements.replace("    ", "        ") + "        pass\n"
    )
    assert [line.split(" ")[0] for line in long_functions(nested, "m")] == ["m:outer", "m:inner"]


def test_no_cli_function_body_is_over_60_lines() -> None:
    assert long_functions_under(PACKAGE / "cli") == []


def test_at_most_10_library_function_bodies_are_over_60_lines() -> None:
    library = [f for f in long_functions_under(PACKAGE) if not f.startswith("trace_envs/cli/")]
    assert len(library) <= MAX_LONG_LIBRARY_FUNCTIONS, "split some of these:\n" + "\n".join(library)
