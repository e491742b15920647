"""Package boundaries, checked on the source (every import, function-level and TYPE_CHECKING ones included):

- core <- domains <- envs (``generated_envs``); targets build on core, domains and llm, never rollout;
- llm <- rollout <- analysis <- synthesis (which reads analysis.json), and llm imports nothing of ours
  (not even core);
- core <- box <- the registry (``trace_envs.registry``): the box imports nothing of the registry, and the layers
  form no loop;
- ``trace_envs`` never imports ``generated_envs`` (the shipped envs are a plugin);
- training and routing use the gym API, ``info`` and the env contract (``oracle_actions``, ``capability``),
  not env internals;
- no import cycles between modules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import pytest

from .conftest import REPO_ROOT

PACKAGE_SURFACE = {
    "trace_envs",
    "trace_envs.registry",
    "trace_envs.description",
    "trace_envs.extras",
    "trace_envs.safe_text",
    "trace_envs.problems",
    "trace_envs.vector",
    "trace_envs.llm_user",
    "trace_envs.registration",
    "trace_envs.plugins",
    "trace_envs.capabilities",
}
"""The top of the package: ``import trace_envs``, the registry (``trace_envs.registry`` and its modules: env ids,
envs and domains, where envs come from, the synthesis manifest, the capability and target registries; they import
by string, so they are not core), ``describe``, the optional extras (which one installs a module), the
config-error formatter, the vector-env support of core's text space, the model-played user ``gym.make(...,
user_model=)`` plays (registered with core as its user factory) and the deprecated top-level shims of the registry's
old homes. Every module is in the layer of its folder: the registry's modules are the package's, and no module of
another folder is counted as the package's."""
DEPRECATED_SHIMS = {
    "trace_envs.registration": "trace_envs.registry",
    "trace_envs.plugins": "trace_envs.registry.sources",
    "trace_envs.capabilities": "trace_envs.registry.capabilities",
    "trace_envs.targets.registry": "trace_envs.registry.targets",
}
"""Old deep import paths kept for one release: each warns and re-exports its new home; nothing of ours imports one
(``test_nothing_imports_a_deprecated_shim``)."""

ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "domains": {"core"},
    "envs": {"core", "domains", "package"},
    "targets": {"core", "domains", "llm", "package"},
    "llm": set(),
    "rollout": {"core", "llm", "package"},
    "analysis": {"core", "domains", "llm", "rollout", "package"},
    "training": {"core", "llm", "package"},
    "routing": {"core", "llm", "training"},
    "testing": {"core", "rollout", "package"},
    "box": {"core"},
    "synthesis": {"core", "domains", "targets", "llm", "rollout", "analysis", "testing", "guide", "box", "package"},
    "guide": {"core", "domains", "package"},
    "package": {"core", "box", "llm"},
    "baselines": {"core", "llm", "rollout", "training", "routing", "targets", "package"},
    "evaluation": {"core", "llm", "rollout", "training", "routing", "targets", "package"},
    "report": {
        "core",
        "llm",
        "rollout",
        "analysis",
        "synthesis",
        "training",
        "routing",
        "baselines",
        "evaluation",
        "package",
    },
    "pipeline": {
        "core",
        "domains",
        "targets",
        "llm",
        "rollout",
        "analysis",
        "training",
        "routing",
        "testing",
        "synthesis",
        "box",
        "baselines",
        "evaluation",
        "report",
        "package",
    },
    "cli": {
        "core",
        "domains",
        "targets",
        "llm",
        "rollout",
        "analysis",
        "training",
        "routing",
        "testing",
        "synthesis",
        "baselines",
        "evaluation",
        "report",
        "pipeline",
        "package",
    },
}
"""The layers each layer may import (besides itself)."""

ENV_INTERNALS = {
    "state", "task", "task_seed", "domain", "user", "user_model", "messages", "ended", "turn", "knobs",
    "tool_schemas", "gold_hash", "facts_told", "verify", "finish", "system_prompt", "policy_text", "make_user",
    "start_conversation", "after_step", "choose_domain", "generate", "current_task",
    "run_tool_calls", "talk", "replay_reference", "_gold_hash", "_pending_seed", "_cache_key",
}  # fmt: skip
"""What training and routing may not read off an env. ``toolset`` is not listed: TRL needs a method for
every tool an env can offer, and one episode's ``info["tools"]`` does not say that for envs whose tools
vary per episode (``trace/device-v0``)."""


def layer(module: str) -> str | None:
    """The layer of a dotted module name (``None``: not one of ours)."""
    if module == "generated_envs" or module.startswith("generated_envs."):
        return "envs"
    if module in PACKAGE_SURFACE or module.startswith("trace_envs.registry."):
        return "package"
    parts = module.split(".")
    if parts[0] != "trace_envs" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in ALLOWED else f"unknown:{parts[1]}"


@dataclass(frozen=True)
class Import:
    module: str
    where: str


def source_modules() -> dict[str, tuple[Path, bool]]:
    """Every module of ``trace_envs`` and ``generated_envs``: dotted name -> (file, is a package)."""
    out = {}
    for package in ("trace_envs", "generated_envs"):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def imports_of(module: str, source: str, is_package: bool, known: set[str], path: str = "") -> Iterator[Import]:
    """Every import of ours in ``source``, resolved to the most specific known module."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:  # relative: from the module's package, one level up per extra dot
                parts = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = ".".join(p for p in (base, node.module) if p)
            targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and layer(target) is not None:
                target = target.rpartition(".")[0]
            if layer(target) is not None:
                yield Import(target, f"{path}:{node.lineno}")


REFERENCE = re.compile(r"^((?:trace_envs|generated_envs)(?:\.\w+)*):\w+(?:\.\w+)*$")
"""A ``"package.module:attribute"`` reference (a capability's probe, a target's tasks): an import made later."""


def references_of(source: str, path: str, known: set[str]) -> Iterator[Import]:
    """Every ``"module:attribute"`` string of ours in ``source``, resolved like an import."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (match := REFERENCE.match(node.value)):
            target = match.group(1)
            while target and target not in known and layer(target) is not None:
                target = target.rpartition(".")[0]
            if layer(target) is not None:
                yield Import(target, f"{path}:{node.lineno} (the reference {node.value!r})")


def layering_violations(module: str, source: str, is_package: bool, known: set[str], path: str) -> list[str]:
    own = layer(module)
    assert own is not None
    if own.startswith("unknown:"):
        return [f"{path}: package trace_envs.{own[8:]} has no layer; add it to ALLOWED in tests/test_layering.py"]
    problems = []
    references = references_of(source, path, known)
    for found in [*imports_of(module, source, is_package, known, path), *references]:
        other = layer(found.module)
        if other != own and other not in ALLOWED[own]:
            allowed = ", ".join(sorted(ALLOWED[own])) or "nothing of ours"
            problems.append(f"{found.where} imports {found.module}: {own} may import only {allowed}")
    return list(dict.fromkeys(problems))


def test_every_import_respects_the_layers() -> None:
    modules = source_modules()
    problems = []
    for module, (path, is_package) in modules.items():
        source = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(REPO_ROOT))
        problems += layering_violations(module, source, is_package, set(modules), rel)
    assert not problems, "\n".join(problems)


def test_no_import_cycles() -> None:
    modules = source_modules()
    edges: dict[str, set[str]] = {}
    for module, (path, is_package) in modules.items():
        source = path.read_text(encoding="utf-8")
        edges[module] = {i.module for i in imports_of(module, source, is_package, set(modules))} - {module}
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> None:
        if module in trail:
            cycle = [*trail[trail.index(module) :], module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for target in sorted(edges.get(module, ())):
            visit(target, [*trail, module])
        done.add(module)

    for module in sorted(edges):
        visit(module, [])


def test_the_layers_form_no_loop() -> None:
    """Each layer sits above the layers it may import: no two layers may import each other, even by a chain, so no
    lazy import is needed to break a loop (the box sits below the registry, which registers its classes)."""
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        assert name not in trail, "layer loop: " + " -> ".join([*trail[trail.index(name) :], name])
        if name not in done:
            for other in sorted(ALLOWED.get(name, ())):
                visit(other, [*trail, name])
            done.add(name)

    for name in sorted(ALLOWED):
        visit(name, [])


def test_nothing_imports_a_deprecated_shim() -> None:
    modules = source_modules()
    found = []
    for module, (path, is_package) in modules.items():
        rel = path.relative_to(REPO_ROOT).as_posix()
        if module in DEPRECATED_SHIMS:
            continue
        for imported in imports_of(module, path.read_text(encoding="utf-8"), is_package, set(modules), rel):
            if imported.module in DEPRECATED_SHIMS:
                found.append(f"{imported.where} imports {imported.module}: use {DEPRECATED_SHIMS[imported.module]}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("old", sorted(DEPRECATED_SHIMS))
def test_a_deprecated_shim_warns_and_re_exports(old: str) -> None:
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=DEPRECATED_SHIMS[old].replace(".", r"\.")):
        shim = importlib.import_module(old)
    new = importlib.import_module(DEPRECATED_SHIMS[old])
    public = [name for name in getattr(new, "__all__", ()) if name not in ("capabilities", "targets")]
    assert public and all(getattr(shim, name) is getattr(new, name) for name in public)


def env_internal_reads(source: str, path: str) -> list[str]:
    """``<something env-like>.<internal>`` attribute reads (``env``, ``self._env``, ``env._env`` …)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ENV_INTERNALS and "env" in ast.unparse(node.value):
            found.append(f"{path}:{node.lineno} reads {ast.unparse(node)} (an env internal)")
    return found


def test_training_and_routing_use_the_gym_api_not_env_internals() -> None:
    problems = []
    for folder in ("training", "routing"):
        for path in sorted((REPO_ROOT / "trace_envs" / folder).rglob("*.py")):
            problems += env_internal_reads(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    assert not problems, "\n".join(problems)


def test_the_internals_listed_are_real_env_attributes() -> None:
    env = gym.make("trace/order-cancel-v0").unwrapped
    env.reset(seed=0)
    assert not [name for name in ENV_INTERNALS if not hasattr(env, name)]


@pytest.mark.parametrize(
    ("module", "source", "needle"),
    [
        ("trace_envs.llm.x", "from trace_envs.core import ToolCall", "trace_envs/llm/x.py:1 imports trace_envs.core"),
        ("trace_envs.targets.tau2.x", "def f():\n    from ...rollout import runner", "imports trace_envs.rollout"),
        ("trace_envs.registry.sources", "import generated_envs", "package may import only box, core, llm"),
        ("trace_envs.box.x", "from trace_envs.registry import register_env", "box may import only core"),
        ("trace_envs.core.x", "from ..domains import retail", "core may import only nothing of ours"),
        ("trace_envs.newpart.x", "", "package trace_envs.newpart has no layer"),
        ("trace_envs.evaluation.x", "from ..analysis import report", "evaluation may import only"),
        ("trace_envs.evaluation.x", "from ..report import write_report", "evaluation may import only"),
        ("generated_envs.x", "probe = 'trace_envs.analysis.probes:probe_x'", "the reference"),
        ("trace_envs.registry.sources", "SCAN = 'trace_envs.synthesis.gates.leakage:generated_leak'", "the reference"),
        ("trace_envs", "DOMAINS = {'toy_shop': 'trace_envs.domains.toy_shop:TOY_SHOP'}", "the reference"),
    ],
)
def test_the_checks_catch_a_violation(module: str, source: str, needle: str) -> None:
    known = {*source_modules(), "trace_envs.rollout.runner"}
    path = module.replace(".", "/") + ".py"
    assert any(needle in p for p in layering_violations(module, source, False, known, path))
    assert env_internal_reads("reward = self._env.verify().reward", "t.py") == [
        "t.py:1 reads self._env.verify (an env internal)"
    ]
