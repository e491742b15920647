"""Gate 3, the contract, read from the AST before anything runs: one ``CapabilityEnv`` subclass, the
requested capability and target domain, and tools that are the target domain's own.

Declarations must be literals (``capability = Capability(name="...")``, ``tool_names = ("...",)``) so
they can be checked here; the execution gate checks the same again on the live object, in the box. An
env may subclass a ``CapabilityEnv`` that the target's kit exports (the device domain's ``DeviceTaskEnv``)
or one of a package the caller trusts (``context.trusted_imports``: the catalogue's shipped envs); its own
declarations are checked all the same.
"""

from __future__ import annotations

import ast
import importlib
import re
from typing import Any

from trace_envs.core import CapabilityEnv, Domain
from trace_envs.registry import get_domain
from trace_envs.registry.targets import target as registered

from .ast_names import import_aliases, parse_module, qualified_name, snippet
from .context import GateContext, named_gate
from .env_classes import env_classes
from .reports import Finding, GateResult
from .static_policy import kit_modules

CORE_PREFIXES = (
    "trace_envs.core.", "trace_envs.core.env.", "trace_envs.core.task.", "trace_envs.core.tools.", "trace_envs.domains.tools.",
)  # fmt: skip
"""Where the contract's names and the ``@tool`` decorator (a domain builder, outside core) are defined."""
BASE_CLASS = "CapabilityEnv"
TOOL_BUILDERS = frozenset({"Domain", "Toolset", "Tool", "tool", "register_domain"})
SCHEMA_ATTRIBUTES = frozenset({"toolset", "tool_schemas"})
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def _core_name(qualified: str | None) -> str | None:
    """``Capability`` for ``trace_envs.core.Capability`` (or a core submodule's), else None."""
    if qualified is None:
        return None
    for prefix in CORE_PREFIXES:
        if qualified.startswith(prefix) and "." not in qualified[len(prefix) :]:
            return qualified[len(prefix) :]
    return None


def domain_attribute(target: str) -> str:
    """The name under which the target's domain module exports its Domain object."""
    return registered(target).synthesis_domain()[2]


@named_gate("contract")
def contract_gate(source: str, context: GateContext) -> GateResult:
    """Gate 3: the module declares one env for the requested capability, on the target's own tools."""
    checker = _ContractChecker(source, context)
    findings = checker.check()
    return GateResult(
        gate="contract",
        status="failed" if findings else "passed",
        findings=findings,
        details={"env_class": checker.env_class or "", "tools": checker.tools},
    )


class _ContractChecker:
    def __init__(self, source: str, context: GateContext):
        self.source = source
        self.context = context
        self.tree = parse_module(source)
        self.aliases = import_aliases(self.tree)
        self.domain_key, self.domain_module, self.domain_name = registered(context.target).synthesis_domain()
        self.domain: Domain[Any] = get_domain(self.domain_key)
        self.findings: list[Finding] = []
        self.env_class: str | None = None
        self.tools: list[str] = []

    def add(self, node: ast.AST | None, rule: str, message: str, fix: str) -> None:
        self.findings.append(
            Finding(
                rule=rule,
                line=getattr(node, "lineno", None),
                subject=snippet(self.source, node) if node is not None else "",
                message=message,
                fix=fix,
            )
        )

    def check(self) -> list[Finding]:
        self._check_tool_builders()
        chain = self._env_chain()
        if chain:
            self.env_class = chain[0].name
            attributes = self._class_attributes(chain)
            self._check_capability(chain[0], attributes.get("capability"))
            self._check_domain(chain[0], attributes.get("domain"))
            self._check_tool_names(attributes.get("tool_names"))
            for name in sorted(SCHEMA_ATTRIBUTES & attributes.keys()):
                self._schema_override(attributes[name])
            for cls in chain:
                for item in cls.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "choose_domain":
                        self.add(
                            item,
                            "domain-variant",
                            "choose_domain() lets the env switch domains; a synthesised env targets exactly one.",
                            f"Remove choose_domain and set domain = {self.domain_name}.",
                        )
        return sorted(self.findings, key=lambda f: f.line or 0)

    # ----- the env class ---------------------------------------------------------------------
    def _env_chain(self) -> list[ast.ClassDef]:
        """The leaf env class followed by its in-module env ancestors (nearest first)."""
        found = env_classes(self.tree, self._env_base)
        if not found.classes:
            self.add(
                None,
                "no-env-class",
                "the module defines no subclass of CapabilityEnv.",
                "Define one class that subclasses CapabilityEnv (from trace_envs.core).",
            )
            return []
        leaves = found.leaves()
        if len(leaves) != 1:
            self.add(
                found.classes[leaves[1]],
                "several-env-classes",
                f"the module defines {len(leaves)} env classes ({', '.join(leaves)}); it must define exactly one.",
                "Keep one CapabilityEnv subclass per module (shared code may live in its base class).",
            )
            return []
        return found.chain(leaves[0])

    def _env_base(self, origin: ast.expr) -> bool:
        """Whether a base's origin (generic forms resolved by :mod:`.env_classes`) is the contract or a trusted env."""
        qualified = qualified_name(origin, self.aliases)
        return _core_name(qualified) == BASE_CLASS or self._trusted_env(qualified)

    def _trusted_env(self, qualified: str | None) -> bool:
        """Whether ``qualified`` names a CapabilityEnv of the target's kit (``DeviceTaskEnv`` of the device
        domain) or of a trusted package (the catalogue's shipped envs)."""
        if qualified is None:
            return False
        module, _, attribute = qualified.rpartition(".")
        roots = (*kit_modules(self.context.target), *self.context.trusted_imports)
        if not any(module == root or module.startswith(root + ".") for root in roots):
            return False
        try:
            value = getattr(importlib.import_module(module), attribute, None)
        except ImportError:
            return False
        return isinstance(value, type) and issubclass(value, CapabilityEnv)

    def _class_attributes(self, chain: list[ast.ClassDef]) -> dict[str, ast.expr]:
        """Class-body assignments, the nearest class's winning."""
        found: dict[str, ast.expr] = {}
        for cls in chain:
            for item in cls.body:
                targets: list[ast.expr] = []
                value: ast.expr | None = None
                if isinstance(item, ast.Assign):
                    targets, value = item.targets, item.value
                elif isinstance(item, ast.AnnAssign) and item.value is not None:
                    targets, value = [item.target], item.value
                for target in targets:
                    if isinstance(target, ast.Name) and value is not None:
                        found.setdefault(target.id, value)
        return found

    # ----- declarations ----------------------------------------------------------------------
    def _check_capability(self, cls: ast.ClassDef, value: ast.expr | None) -> None:
        requested = self.context.capability
        example = f'capability = Capability(name="{requested or "my_capability"}", description="...")'
        if value is None:
            self.add(cls, "no-capability", f"{cls.name} declares no capability.", f"Add {example}.")
            return
        if not (isinstance(value, ast.Call) and _core_name(qualified_name(value.func, self.aliases)) == "Capability"):
            self.add(value, "capability-not-literal", "capability is not a Capability(...) call.", f"Write {example}.")
            return
        arguments = {k.arg: k.value for k in value.keywords if k.arg}
        if value.args:
            arguments.setdefault("name", value.args[0])
        name_node = arguments.get("name")
        if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
            self.add(
                value, "capability-not-literal", "the capability name is not a string literal.", f"Write {example}."
            )
            return
        name = name_node.value
        if not SNAKE_CASE.match(name):
            self.add(value, "capability-name", f"capability name {name!r} is not snake_case.", f"Write {example}.")
        elif requested is not None and name != requested:
            self.add(
                value,
                "wrong-capability",
                f"the env declares capability {name!r}, but {requested!r} was requested.",
                f"Write {example}.",
            )

    def _check_domain(self, cls: ast.ClassDef, value: ast.expr | None) -> None:
        target = self.context.target
        fix = f"Set domain = {self.domain_name} (from {self.domain_module} import {self.domain_name})."
        if value is None:
            self.add(cls, "no-domain", f"{cls.name} declares no domain.", fix)
            return
        qualified = qualified_name(value, self.aliases)
        if qualified is None or not self._is_target_domain(qualified):
            self.add(
                value,
                "wrong-domain",
                f"domain is {snippet(self.source, value)}, not the {target} domain object; the env must run on the "
                f"target's own state model and tools.",
                fix,
            )

    def _is_target_domain(self, qualified: str) -> bool:
        module, _, attribute = qualified.rpartition(".")
        package = self.domain_module
        if module != package and not module.startswith(package + "."):
            return False
        try:
            return getattr(importlib.import_module(module), attribute, None) is self.domain
        except ImportError:
            return False

    def _check_tool_names(self, value: ast.expr | None) -> None:
        available = list(self.domain.toolset)
        if value is None:
            self.tools = available
            return
        items = value.elts if isinstance(value, ast.Tuple | ast.List) else None
        if items is None or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items):
            self.add(
                value,
                "tool-names-not-literal",
                "tool_names is not a tuple of string literals.",
                'Write tool_names = ("tool_a", "tool_b") with names of the target domain\'s tools.',
            )
            return
        names = [str(e.value) for e in items if isinstance(e, ast.Constant)]
        self.tools = names
        for element, name in zip(items, names, strict=True):
            if name not in self.domain.toolset:
                self.add(
                    element,
                    "tool-not-in-domain",
                    f"tool {name!r} is not a tool of the {self.context.target} domain.",
                    f"Use only the domain's tools: {', '.join(available)}.",
                )

    def _schema_override(self, node: ast.AST) -> None:
        self.add(
            node,
            "schema-override",
            "the env replaces its toolset or tool schemas, so the agent would see schemas other than the target's.",
            "Select tools with tool_names only; never set toolset or tool_schemas.",
        )

    # ----- tools and domains built by the module ---------------------------------------------
    def _check_tool_builders(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr in SCHEMA_ATTRIBUTES:
                self._schema_override(node)
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    func = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if _core_name(qualified_name(func, self.aliases)) == "tool":
                        self._own_tool(node, decorator)
            elif isinstance(node, ast.Call):
                builder = _core_name(qualified_name(node.func, self.aliases))
                if builder in TOOL_BUILDERS and builder != "tool":
                    self.add(
                        node,
                        "own-domain",
                        f"the module builds its own {builder}; a synthesised env must use the target domain's "
                        "tools, whose schemas the agent will meet on the real benchmark.",
                        f"Remove it and set domain = {self.domain_name}, selecting tools with tool_names.",
                    )

    def _own_tool(self, function: ast.FunctionDef, decorator: ast.expr) -> None:
        name = function.name
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    name = str(keyword.value.value)
        parameters = [a.arg for a in function.args.args[1:] + function.args.kwonlyargs]
        if name in self.domain.toolset:
            expected = self.domain.toolset[name].arg_names
            detail = (
                f"with parameters ({', '.join(parameters)}) where the {self.context.target} domain's has "
                f"({', '.join(expected)})"
                if parameters != expected
                else "with its own docstring and types"
            )
            message = f"the module redefines the tool {name} {detail}: a schema mismatch with the target."
        else:
            message = f"the module defines a tool {name} that the {self.context.target} domain does not have."
        self.add(
            function,
            "schema-mismatch" if name in self.domain.toolset else "tool-not-in-domain",
            message,
            f"Use the domain's own tools (domain = {self.domain_name}, tool_names = (...)); never define tools.",
        )
