"""The module layout every env in ``generated_envs/`` follows (issue 14), checked on the source.

A module docstring of labelled paragraphs in a fixed order, a file of at most 300 lines (the starter
``order_cancel.py`` at most 100), no function or method over 60 lines, and no ``_*.py`` helper module:
shared record and task helpers live in the domain packages (``trace_envs/domains/...``). Each env module
is its own test case, so one env out of layout fails alone.
"""

from __future__ import annotations

import ast

import pytest

from trace_envs.guide import FUNCTION_MAX_LINES, MODULE_MAX_LINES, STARTER_MAX_LINES

from ..conftest import REPO_ROOT

ENVS_DIR = REPO_ROOT / "generated_envs"
LABELS = ("Capability", "Domain", "Task kinds", "Knobs", "Verifier", "Failure it targets", "Example")
"""The docstring's labelled paragraphs, in order, after the one-line summary."""
MAX_LINES = MODULE_MAX_LINES
MAX_LINES_STARTER = {"order_cancel": STARTER_MAX_LINES, "retail_order_cancel": STARTER_MAX_LINES}
MAX_FUNCTION_LINES = FUNCTION_MAX_LINES

ENV_MODULES = sorted(p.stem for p in ENVS_DIR.glob("*.py") if not p.name.startswith("_"))
ALL_MODULES = sorted(p.stem for p in ENVS_DIR.glob("*.py"))


def docstring_problems(source: str) -> list[str]:
    """What is wrong with a module docstring against the layout (empty: it follows it)."""
    doc = ast.get_docstring(ast.parse(source), clean=True)
    if not doc:
        return ["no module docstring"]
    summary, *rest = doc.splitlines()
    problems = []
    if not summary.endswith(".") or (rest and rest[0].strip()):
        problems.append("the docstring must open with a one-line summary ending with '.', then a blank line")
    found: list[str] = []
    texts: dict[str, str] = {}
    for line in rest:
        label = next((lab for lab in LABELS if line.startswith(f"{lab}:")), None)
        if label is not None:
            found.append(label)
            texts[label] = line[len(label) + 1 :].strip()
        elif line.strip() and not found:
            problems.append(f"line {line[:40]!r} comes before the first label; start it with one of {LABELS}")
        elif found:
            texts[found[-1]] += line.strip()
    problems += [f"{label}: is empty" for label, text in texts.items() if not text]
    if tuple(found) != LABELS:
        problems.append(f"labels are {tuple(found)}; the layout needs exactly {LABELS}, in that order")
    return problems


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Every function or method over ``limit`` lines (``end_lineno - lineno + 1``), as ``name:line (n lines)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append(f"{node.name}:{node.lineno} ({length} lines)")
    return found


def read(module: str) -> str:
    return (ENVS_DIR / f"{module}.py").read_text(encoding="utf-8")


def test_there_are_env_modules_to_check() -> None:
    assert {"order_cancel", "precondition", "structured_data"} <= set(ENV_MODULES)


def test_no_helper_module_in_generated_envs() -> None:
    helpers = [p.name for p in ENVS_DIR.glob("_*.py") if p.name != "__init__.py"]
    assert not helpers, f"{helpers}: shared helpers live in the domain packages (trace_envs/domains/...)"


@pytest.mark.parametrize("module", ENV_MODULES)
def test_the_docstring_has_the_layout_labels_in_order(module: str) -> None:
    assert docstring_problems(read(module)) == []


@pytest.mark.parametrize("module", ENV_MODULES)
def test_the_module_is_short(module: str) -> None:
    limit = MAX_LINES_STARTER.get(module, MAX_LINES)
    lines = len(read(module).splitlines())
    assert lines <= limit, f"generated_envs/{module}.py has {lines} lines; the layout allows {limit}"


@pytest.mark.parametrize("module", ALL_MODULES)
def test_no_function_is_over_60_lines(module: str) -> None:
    assert long_functions(read(module)) == []


GOOD = '''"""Cancel an order.

Capability: precondition_verification — check first.
Domain: toy_shop — two tools.
Task kinds: cancel: one order.
Knobs: none
Verifier: the gold state hash.
Failure it targets: acting unchecked.
Example: seed 0 cancels a delivered order.
"""
'''


def test_the_docstring_check_accepts_the_layout() -> None:
    assert docstring_problems(GOOD) == []


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("x = 1\n", "no module docstring"),
        (GOOD.replace("Cancel an order.", "Cancel an order"), "one-line summary"),
        (GOOD.replace("Cancel an order.\n", "Cancel an order.\nMore.\n"), "then a blank line"),
        (GOOD.replace("Knobs: none\n", ""), "labels are"),
        (GOOD.replace("Knobs: none\nVerifier: the gold state hash.", "Verifier: the gold state hash.\nKnobs: none"),
         "in that order"),
        (GOOD.replace("\n\nCapability:", "\n\nSee below.\nCapability:"), "comes before the first label"),
        (GOOD.replace("Domain: toy_shop", "Domains: toy_shop"), "labels are"),
        (GOOD.replace("Verifier: the gold state hash.", "Verifier:"), "Verifier: is empty"),
    ],
)  # fmt: skip
def test_the_docstring_check_names_what_breaks_the_layout(source: str, needle: str) -> None:
    assert any(needle in problem for problem in docstring_problems(source))


def test_a_long_function_is_found_and_a_60_line_one_is_not() -> None:
    def function(lines: int) -> str:
        return "def f():\n" + "    x = 1\n" * (lines - 1)

    assert long_functions(function(60)) == []
    assert long_functions("class A:\n    " + function(61).replace("\n", "\n    ")) == ["f:2 (61 lines)"]


def test_the_modules_found_are_the_folder_s_python_files() -> None:
    assert set(ALL_MODULES) - set(ENV_MODULES) == {"__init__"}
