"""Gates 1 and 2: the module is plain UTF-8 Python that parses, and its AST keeps to the allow-list of
names and avoids forbidden constructs.

Cheap (milliseconds) and run before anything executes. The allow-list is of names, not modules
(:mod:`.allowlist`, checked by :mod:`.import_policy`); :mod:`.reach_policy` refuses the side doors (dunder
methods, private attributes, format fields that walk attributes, quoted annotations); this module keeps
the rules for what a generator writes by habit (``import os``, ``random.choice``, ``datetime.now()``,
``open``, ``getattr`` with a computed name, dunder attributes, ``__builtins__``), and holds to them what reads
an attribute by name without an attribute node: a ``match`` class pattern's keywords, names bound by patterns,
``except ... as``, parameters and keywords, and a frame attribute's name in a string (``operator.attrgetter`` and
``methodcaller`` are off the allow-list; a mapping pattern's keys are subscripts, checked as strings). They cannot
see what code does at run time: that is the sandbox's job.
"""

from __future__ import annotations

import ast
import re

from .allowlist import STDLIB_NAMES, is_allowed_module
from .ast_names import exclusive_ast, import_aliases, parse_module, qualified_name, snippet
from .build_policy import build_findings
from .context import GateContext, named_gate
from .import_policy import ImportPolicy
from .reach_policy import reach_findings
from .reports import Finding, GateResult
from .scopes import builtin_loads
from .source_text import source_text_findings

MAX_SOURCE_CHARS = 300_000

MODULE_REASONS: dict[str, str] = {
    "pydantic.v1": "has BaseSettings, which fills fields from the environment and secrets files",
    "pydantic_settings": "fills fields from the environment and secrets files",
    "os": "gives file, process and environment access",
    "sys": "reaches interpreter internals",
    "subprocess": "starts processes",
    "socket": "opens network connections",
    "ssl": "opens network connections",
    "ctypes": "calls native code, around every Python-level check",
    "importlib": "imports arbitrary modules",
    "builtins": "reaches open, exec and eval",
    "time": "reads the wall clock (tasks must depend on the seed alone)",
    "threading": "runs code outside the env's calls",
    "multiprocessing": "starts processes",
    "asyncio": "runs code outside the env's calls",
    "signal": "sends and traps signals",
    "resource": "changes process limits",
    "pickle": "runs code while loading data",
    "marshal": "loads code objects",
    "shutil": "changes the file system",
    "pathlib": "touches the file system",
    "io": "opens files",
    "tempfile": "creates files",
    "glob": "reads the file system",
    "uuid": "draws randomness outside the seed",
    "secrets": "draws randomness outside the seed",
    "inspect": "reaches interpreter internals",
    "gc": "reaches every object in the interpreter",
    "urllib": "opens network connections",
    "http": "opens network connections",
    "requests": "opens network connections",
}

FORBIDDEN_BUILTINS: dict[str, str] = {
    "open": "opens files",
    "exec": "runs code built at run time",
    "eval": "runs code built at run time",
    "compile": "builds code at run time",
    "__import__": "imports arbitrary modules",
    "globals": "reaches module internals by name",
    "locals": "reaches frame internals by name",
    "vars": "reaches object internals by name",
    "input": "reads the terminal",
    "breakpoint": "starts a debugger",
    "help": "starts an interactive pager",
    "exit": "exits the process",
    "quit": "exits the process",
}
NONDETERMINISTIC_BUILTINS: dict[str, str] = {
    "hash": "hash() of str and bytes changes with PYTHONHASHSEED, so tasks would differ between processes",
    "id": "id() is a memory address, different in every process",
}
ATTRIBUTE_BUILTINS = ("getattr", "setattr", "delattr", "hasattr")
CLOCK_READS = ("now", "today", "utcnow")
FRAME_ATTRIBUTES = frozenset(
    {"gi_frame", "gi_code", "cr_frame", "ag_frame", "f_back", "f_globals", "f_locals", "f_builtins", "f_code"}
    | {"tb_frame", "tb_next", "co_code", "func_globals"}
)
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__doc__", "__all__", "__slots__", "__main__"})
SUPER_DUNDERS = frozenset({"__init__", "__post_init__", "__init_subclass__"})
DUNDER = re.compile(r"^__\w+__$")
FRAME_WORD = re.compile(r"\b(?:" + "|".join(sorted(FRAME_ATTRIBUTES)) + r")\b")
"""A frame attribute's name as a word of a string: a name read by a string elsewhere (a pydantic alias, a
``namedtuple``'s fields, code that reaches ``exec``) reads the attribute with no attribute node."""
FORMAT_DUNDER = re.compile(r"\{[^{}]*__\w+__[^{}]*\}")

NO_DUNDER_FIX = "Use the object's public API; capability envs never need dunder attributes."


def kit_modules(target: str) -> tuple[str, ...]:
    """The modules of our package a module for ``target`` may import (with their submodules): the target's
    registered :attr:`~trace_envs.registry.targets.Target.kit`, the one declaration the prompt states too."""
    from trace_envs.registry.targets import target as target_spec

    return target_spec(target).kit


def allowed_module(name: str, target: str, trusted: tuple[str, ...] = ()) -> bool:
    """Whether ``import name`` is on the allow-list for a module that targets ``target``: the standard modules
    of :data:`~.allowlist.STDLIB_NAMES` (exactly), the target's kit (:func:`kit_modules`) and ``trusted`` (packages the caller allows besides, such
    as the catalogue's ``generated_envs``)."""
    return is_allowed_module(name, (*kit_modules(target), *trusted))


def allowed_summary(target: str, trusted: tuple[str, ...] = ()) -> str:
    """The allow-list in words, as findings and the gate's note state it."""
    return ", ".join([*kit_modules(target), *trusted, *sorted(STDLIB_NAMES)])


@named_gate("parse")
def parse_gate(source: str, context: GateContext) -> GateResult:
    """Gate 1: the source is plain UTF-8 Python that compiles (nothing is executed), read exactly as Python
    would import it (no coding cookie, BOM or non-UTF-8 byte: :mod:`.source_text`)."""
    findings = source_text_findings(source)
    if not findings and len(source) > MAX_SOURCE_CHARS:
        findings.append(
            Finding(
                rule="too-large",
                message=f"the module has {len(source):,} characters, more than the {MAX_SOURCE_CHARS:,} allowed.",
                fix="Write one small env module; move nothing but the env into it.",
            )
        )
    elif not findings:
        try:
            parse_module(source, context.filename)
            with exclusive_ast():  # compile builds an AST too (see parse_module)
                compile(source, context.filename, "exec", dont_inherit=True)  # errors only bytecode compilation finds
        except SyntaxError as exc:
            findings.append(
                Finding(
                    rule="syntax-error",
                    line=exc.lineno,
                    subject=(exc.text or "").strip()[:60],
                    message=f"{exc.msg}.",
                    fix="Return one complete, valid Python module.",
                )
            )
        except ValueError as exc:  # null bytes
            findings.append(Finding(rule="syntax-error", message=f"{exc}.", fix="Return plain Python source text."))
    return GateResult(gate="parse", status="failed" if findings else "passed", findings=findings)


@named_gate("static_policy")
def static_policy_gate(source: str, context: GateContext) -> GateResult:
    """Gate 2: imports on the allow-list; no forbidden names, dunder access, clock reads or global RNG."""
    findings = check_policy(parse_module(source), source, context.target, context.trusted_imports)
    return GateResult(
        gate="static_policy",
        status="failed" if findings else "passed",
        findings=findings,
        details={"note": f"imports limited to {allowed_summary(context.target, context.trusted_imports)}"},
    )


def check_policy(tree: ast.AST, source: str, target: str, trusted: tuple[str, ...] = ()) -> list[Finding]:
    """Every policy finding in ``tree``, one per (line, subject, rule), in line order."""
    builtins = builtin_loads(tree)  # per scope: a parameter named getattr in one function hides nothing elsewhere
    visitor = _PolicyVisitor(source, target, import_aliases(tree), builtins, trusted)
    visitor.visit(tree)
    found = visitor.findings + ImportPolicy(source, (*kit_modules(target), *trusted)).check(tree)
    found += reach_findings(tree, source) + build_findings(tree, source, builtins)
    unique = {(f.line, f.rule, f.subject): f for f in found}
    return sorted(unique.values(), key=lambda f: (f.line or 0, f.rule))


class _PolicyVisitor(ast.NodeVisitor):
    def __init__(
        self, source: str, target: str, aliases: dict[str, str], builtins: set[int], trusted: tuple[str, ...] = ()
    ):
        self.source = source
        self.target = target
        self.trusted = trusted
        self.aliases = aliases
        self.builtins = builtins  # id() of the name loads that are the builtins (resolved per scope)
        self.findings: list[Finding] = []
        self.called: set[int] = set()  # ast node ids of names that are called directly

    def add(self, node: ast.AST, rule: str, message: str, fix: str, subject: str | None = None) -> None:
        self.findings.append(
            Finding(
                rule=rule,
                line=getattr(node, "lineno", None),
                subject=subject if subject is not None else snippet(self.source, node),
                message=message,
                fix=fix,
            )
        )

    # ----- imports ----------------------------------------------------------------------------
    def _check_module(self, node: ast.AST, name: str) -> None:
        if allowed_module(name, self.target, self.trusted):
            return
        top = name.split(".")[0]
        if top == "trace_envs" or top == "generated_envs":
            why = f"is not in the {self.target} target's kit ({', '.join(kit_modules(self.target))})"
        else:
            why = MODULE_REASONS.get(name, MODULE_REASONS.get(top, "is not on the allow-list"))
        self.add(
            node,
            "forbidden-import",
            f"import of {name}: it {why}.",
            f"Remove it. A capability env may import only {allowed_summary(self.target, self.trusted)}.",
        )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add(
                node,
                "relative-import",
                "relative imports reach files beside the module, which a validated module cannot rely on.",
                f"Import from the {self.target} target's kit by absolute name: {', '.join(kit_modules(self.target))}.",
            )
            return
        module = node.module or ""
        self._check_module(node, module)
        for alias in node.names:
            if alias.name == "*":
                self.add(
                    node,
                    "star-import",
                    f"from {module} import * hides which names are used.",
                    "Import names explicitly.",
                )
            elif module == "random" and alias.name != "Random":
                self._global_rng(node, f"random.{alias.name}")
            elif module == "datetime" and alias.name in CLOCK_READS:
                self._clock(node, f"datetime.{alias.name}")

    # ----- names ------------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if name in FORBIDDEN_BUILTINS and isinstance(node.ctx, ast.Load):
            self.add(
                node,
                "forbidden-name",
                f"{name} {FORBIDDEN_BUILTINS[name]}; capability envs never need it.",
                "Remove it (or rename a variable that shadows it).",
                subject=name,
            )
        elif name in NONDETERMINISTIC_BUILTINS and id(node) in self.builtins:
            self.add(
                node,
                "nondeterministic-builtin",
                f"{NONDETERMINISTIC_BUILTINS[name]}.",
                "Use a stable key (the value itself, sorted(), or canonical_hash from trace_envs.core).",
                subject=name,
            )
        elif name in ATTRIBUTE_BUILTINS and id(node) in self.builtins:
            if id(node) not in self.called:
                self.add(
                    node,
                    "dynamic-attribute",
                    f"{name} used as a value can reach any attribute by a computed name.",
                    "Call it directly with a literal attribute name, or use plain attribute access.",
                    subject=name,
                )
        else:
            self._check_identifier(node, name)

    def _check_identifier(self, node: ast.AST, name: str) -> None:
        """A name the module binds or reads by a plain identifier (a variable, a parameter, a keyword, a pattern's
        capture): no dunder name, and no frame attribute's name (a pydantic field named ``gi_frame`` reads the
        attribute of an object validated ``from_attributes``)."""
        if DUNDER.match(name) and name not in ALLOWED_DUNDER_NAMES:
            self.add(node, "dunder-name", f"{name} reaches interpreter internals.", NO_DUNDER_FIX, subject=name)
        elif name in FRAME_ATTRIBUTES:
            self.add(node, "frame-attribute", f"{name} reaches frames and their globals.", NO_DUNDER_FIX, subject=name)

    def visit_arg(self, node: ast.arg) -> None:
        self._check_identifier(node, node.arg)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None:
            self._check_identifier(node, node.arg)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name is not None:
            self._check_identifier(node, node.name)
        self.generic_visit(node)

    # ----- pattern matching: it reads attributes and binds names without Attribute or Name nodes ------------
    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        """``case C(attr=...)`` reads ``subject.attr`` by name: each keyword is held to the attribute rules."""
        for attr in node.kwd_attrs:
            self._pattern_attribute(node, attr)
        self.generic_visit(node)

    def _pattern_attribute(self, node: ast.MatchClass, attr: str) -> None:
        if DUNDER.match(attr):
            self.add(node, "dunder-attribute", f"the pattern reads the dunder attribute {attr}.", NO_DUNDER_FIX)
        elif attr in FRAME_ATTRIBUTES:
            self.add(node, "frame-attribute", f"the pattern reads {attr}, which reaches frames.", NO_DUNDER_FIX)
        elif attr.startswith("_"):
            self.add(
                node,
                "private-attribute",
                f"the pattern reads the private attribute {attr} of an object the module does not own.",
                "Use the object's public API; match on public attributes only.",
            )

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name is not None:
            self._check_identifier(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name is not None:
            self._check_identifier(node, node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        """A mapping pattern reads keys (checked as strings, like a subscript's) and binds ``**rest``."""
        if node.rest is not None:
            self._check_identifier(node, node.rest)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.add(
            node,
            "global-state",
            f"global {', '.join(node.names)} changes module state that outlives an episode (state leaks between resets).",
            "Keep per-episode state on self (set in generate/reset), not in module globals.",
        )

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.add(
            node,
            "global-state",
            f"nonlocal {', '.join(node.names)} keeps state in a closure that outlives an episode.",
            "Keep per-episode state on self.",
        )

    # ----- attributes -------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if DUNDER.match(attr):
            on_super = (
                isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "super"
            )
            if not (on_super and attr in SUPER_DUNDERS):
                self.add(
                    node,
                    "dunder-attribute",
                    f"the dunder attribute {attr} reaches interpreter internals.",
                    NO_DUNDER_FIX,
                )
        elif attr in FRAME_ATTRIBUTES:
            self.add(node, "frame-attribute", f"{attr} reaches frames and their globals.", NO_DUNDER_FIX)
        else:
            self._check_qualified(node, qualified_name(node, self.aliases))
        self.generic_visit(node)

    def _check_qualified(self, node: ast.AST, qualified: str | None) -> None:
        if qualified is None:
            return
        parts = qualified.split(".")
        if parts[0] == "random" and len(parts) >= 2 and parts[1] != "Random":
            self._global_rng(node, qualified)
        elif parts[0] == "datetime" and parts[-1] in CLOCK_READS:
            self._clock(node, qualified)

    def _global_rng(self, node: ast.AST, qualified: str) -> None:
        self.add(
            node,
            "global-rng",
            f"{qualified} uses the process-wide random generator, so tasks are not a function of the seed.",
            "Draw from the rng that generate() receives (rng.choice, rng.randint, ...) or a random.Random(seed) built from it.",
        )

    def _clock(self, node: ast.AST, qualified: str) -> None:
        self.add(
            node,
            "wall-clock",
            f"{qualified} reads the wall clock, so tasks change from one run to the next.",
            "Use a fixed reference date (e.g. datetime(2024, 5, 15)) plus offsets drawn from rng.",
        )

    # ----- calls ------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            self.called.add(id(func))
            if func.id in ATTRIBUTE_BUILTINS and id(func) in self.builtins:
                self._attribute_builtin(node, func.id)
        qualified = qualified_name(func, self.aliases)
        if qualified == "random.Random" and not node.args and not node.keywords:
            self.add(
                node,
                "global-rng",
                "random.Random() without a seed is seeded from the operating system.",
                "Pass a seed drawn from the rng that generate() receives: random.Random(rng.random()).",
            )
        self.generic_visit(node)

    def _attribute_builtin(self, node: ast.Call, name: str) -> None:
        if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant) or not isinstance(node.args[1].value, str):
            self.add(
                node,
                "dynamic-attribute",
                f"{name} with a computed attribute name can reach anything, builtins included.",
                "Use plain attribute access (obj.name) or a dict lookup.",
            )
            return
        attr = node.args[1].value
        if DUNDER.match(attr) or attr in FRAME_ATTRIBUTES:
            self.add(node, "dunder-attribute", f"{name}(..., {attr!r}) reaches interpreter internals.", NO_DUNDER_FIX)
        elif attr.startswith("_") and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls")):
            self.add(
                node,
                "private-attribute",
                f"{name}(..., {attr!r}) reaches a private attribute of an object the module does not own.",
                "Use the object's public API; private attributes are only for self and cls.",
            )
        else:
            base = qualified_name(node.args[0], self.aliases)
            if base is not None:
                self._check_qualified(node, f"{base}.{attr}")

    # ----- string constants -------------------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        """A string statement (a docstring) is prose that nothing reads by name: only its dunder rule applies."""
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            self._check_string(node.value, node.value.value, prose=True)
        else:
            self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self._check_string(node, node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        """An f-string: its constant parts are checked at the f-string's line (3.11 misplaces the parts)."""
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                self._check_string(node, value.value)
            else:
                self.visit(value)

    def _check_string(self, node: ast.AST, text: str, prose: bool = False) -> None:
        if DUNDER.match(text) and text not in ALLOWED_DUNDER_NAMES:
            self.add(node, "dunder-string", f"the string {text!r} names an interpreter internal.", NO_DUNDER_FIX)
        elif not prose and (frame := FRAME_WORD.search(text)) is not None:
            self.add(
                node,
                "frame-attribute",
                f"the string names {frame.group()}, a frame attribute (a name a string gives is read elsewhere).",
                NO_DUNDER_FIX,
            )
        elif FORMAT_DUNDER.search(text):
            self.add(
                node,
                "dunder-string",
                "a format string that reaches dunder attributes ({x.__class__...}) reads interpreter internals.",
                NO_DUNDER_FIX,
            )
