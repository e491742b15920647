"""Validating env modules written by anyone, as ``trace-envs validate`` does: read each file, tell which target it
is for (from the kit it imports, read from its AST without running it), check that target and its data, run
every gate on the modules a few at a time, and record the passing ones in their folder's manifest (a catalogue
module gets the packages it was synthesised with as trusted imports)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_envs.problems import renamed_arguments

from .gates.context import GateContext
from .gates.reports import ValidationReport
from .sandbox.protocol import SandboxLimits


class ModuleInputError(ValueError):
    """Bad input to a module check: ``field`` names what is wrong (``module``, ``target`` or ``data``)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ModuleSource:
    """An env module to validate: where it is, its source and the target it is for."""

    path: Path
    source: str
    target: str


@dataclass(frozen=True)
class ModuleValidation:
    """A module's gate report and whether it was recorded in its folder's manifest."""

    path: Path
    report: ValidationReport
    recorded: bool


@renamed_arguments({"tau2_data": "data"})
def check_target(target: str, data: Path | None = None, *, check_data: bool = True) -> None:
    """Refuse an unregistered target, and (``data``) a target whose data folder lacks its evaluation tasks
    (the leakage guard needs them before anything is generated or validated)."""
    from trace_envs.registry.targets import TargetDataError
    from trace_envs.registry.targets import target as registered

    try:
        spec = registered(target)
    except ValueError as exc:
        raise ModuleInputError("target", str(exc)) from None
    if check_data:
        try:
            spec.check_data(data)
        except TargetDataError as exc:
            raise ModuleInputError("data", str(exc)) from None


def defines_no_env(path: Path, source: str) -> str | None:
    """Why ``source`` cannot be an env module (not Python, or no class deriving from an ``…Env`` class),
    read from its AST without running it; None when it may be one."""
    from .gates.ast_names import parse_module
    from .gates.env_classes import env_classes

    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return f"{path} is not valid Python ({'line ' + str(line) + ': ' if line else ''}{getattr(exc, 'msg', exc)})"
    if env_classes(tree, _named_like_an_env).classes:
        return None
    return (
        f"{path} defines no env (no class deriving from CapabilityEnv); pass a module that defines one "
        "(see docs/writing-an-env.md)"
    )


def _named_like_an_env(origin: ast.expr) -> bool:
    """Before the target is known, any outside base named ``…Env`` may be an env class (``CapabilityEnv``, a
    kit's ``DeviceTaskEnv``); the contract gate checks which it is once the target is settled."""
    name = origin.attr if isinstance(origin, ast.Attribute) else getattr(origin, "id", "")
    return isinstance(name, str) and name.endswith("Env")


def _no_single_target(path: Path, imported: list[str], known: list[str]) -> str:
    """Why the target of an env module is not settled, and the fix: several kits imported, or none (then the
    env may be on a domain of its own, which no target's gates can check)."""
    if imported:
        return (
            f"cannot tell which target {path} is for: it imports the kits of {', '.join(imported)}; "
            f"pass --target {'|'.join(imported)}"
        )
    return (
        f"cannot tell which target {path} is for: it imports no target's kit (trace_envs.domains.<target>); "
        f"pass --target {'|'.join(known)} if it uses that target's domain; an env on a domain of its own "
        "(as generated_envs/order_cancel.py and examples/library_env.py are) is checked by the property suite "
        "instead (docs/testing-an-env.md)"
    )


@renamed_arguments({"tau2_data": "data"})
def read_module(path: Path, target: str | None = None, data: Path | None = None) -> ModuleSource:
    """Read an env module and settle its target (``target``, else the one target kit it imports), checked."""
    from trace_envs.registry.targets import targets

    from .gates.validation import infer_target, targets_imported

    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModuleInputError("module", f"{path} does not exist; pass the path of a Python file") from None
    except UnicodeDecodeError as exc:
        bad_line = exc.object[: exc.start].count(b"\n") + 1
        raise ModuleInputError(
            "module", f"{path} is not UTF-8: line {bad_line} holds byte 0x{exc.object[exc.start]:02x}; save it as UTF-8"
        ) from None
    except IsADirectoryError:
        raise ModuleInputError("module", f"{path} is not a UTF-8 Python source file") from None
    module_target = target or infer_target(source)
    if module_target is None:
        not_an_env = defines_no_env(path, source)
        if not_an_env is not None:
            raise ModuleInputError("module", not_an_env)
        raise ModuleInputError("target", _no_single_target(path, targets_imported(source), list(targets())))
    check_target(module_target, data)
    return ModuleSource(path, source, module_target)


def validate_modules(
    modules: Sequence[ModuleSource],
    *,
    trust: Sequence[str] | None = None,
    jobs: int = 2,
    weaker_box: bool = False,
    **settings: Any,
) -> list[ModuleValidation]:
    """Every gate on each module, ``jobs`` at a time (the gates wait on sandbox processes, so threads suffice);
    ``settings`` are :class:`GateContext` fields (capability, seeds, calibration...), ``trust`` extra packages.
    ``weaker_box``: run the boxes with the kernel layers this host has where one is missing (the report names
    those in force); without it, such a host's validation fails naming the missing layer."""
    from .generation.catalogue import module_trusted_imports

    if weaker_box:
        limits = settings.get("limits") or SandboxLimits()
        settings["limits"] = limits.model_copy(update={"weaker_box": True})

    contexts = [
        GateContext(
            target=m.target, filename=m.path.name, trusted_imports=module_trusted_imports(m.path, trust), **settings
        )
        for m in modules
    ]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_validate_one, modules, contexts))


def _validate_one(module: ModuleSource, context: GateContext) -> ModuleValidation:
    from .gates.validation import validate_source
    from .manifest import record_validated

    report = validate_source(module.source, context)
    return ModuleValidation(module.path, report, report.passed and record_validated(module.path, report, context))
