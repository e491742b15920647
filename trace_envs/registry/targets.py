"""The target registry: each target benchmark is one registered :class:`Target`, the way Gymnasium
registers an ``EnvSpec``.

A target says everything the library needs to know about a benchmark: its name, domains and env ids, how to
list its tasks as plain records (:class:`TargetTask`), what of its evaluation tasks a synthesised env must not
copy (its leakage index), its reference and flawed actions, its data folder and the env kit a generated module
may import. Its facts are attributes and its behaviour typed methods of a :class:`Target` subclass.

The shipped targets register like a third-party package's, through the ``trace_envs.targets`` entry-point group
(``docs/plugins.md``): trace-envs's own entry point ``builtin`` lists one lazy ``"module:attribute"`` reference per
shipped target and loads first, when the registry is first read; a target's module imports nothing heavy at its
top, so that costs little, and the lower layers (rollout, evaluation, synthesis) read the registry without
importing upward (issue 36: nothing of the package names the targets layer). Nothing outside the targets package branches on a target's name: it asks the registry.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..problems import warn_renamed
from .builtins import group_entry_points, is_builtin
from .envs import EnvKind, resolve

ENTRY_POINT_GROUP = "trace_envs.targets"
"""The entry-point group of targets: the shipped ones (trace-envs's own entry point, loaded first) and plugins'."""


class TargetDataError(FileNotFoundError):
    """A target's data folder or file is missing or malformed; the message says which and how to fix it."""


class TargetTask(BaseModel):
    """One task of a target, as the episode that plays it (a plain record: env id, kwargs, reset options)."""

    task_id: str
    domain: str
    env_id: str
    seed: int
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    reset_options: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class TargetTasks:
    """The tasks a target's loader chose, with where they came from and the split they belong to."""

    source: str
    split: str
    tasks: list[TargetTask]
    available: int | None = None
    """How many tasks the split had before a limit cut them (``None``: the loader does not say)."""


@dataclass(frozen=True, eq=False)
class LeakageTask:
    """One evaluation task as the leakage guard sees it: where it comes from, the ids and task ids it names,
    its instruction texts and the argument values of its reference solution."""

    where: str
    ids: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()
    texts: tuple[str | None, ...] = ()
    values: tuple[Any, ...] = ()


@dataclass(frozen=True, eq=False)
class LeakageRecords:
    """A target's evaluation tasks for the leakage guard; ``common`` is text a module may share with them
    (the domain's own policy). Hashed by identity: a target returns the same object for the same data."""

    source: str
    tasks: tuple[LeakageTask, ...]
    common: str = ""


def task_seed(domain: str, task_id: str) -> int:
    """A stable seed per task (the first 4 bytes of sha256 of ``domain/task_id``)."""
    return int.from_bytes(hashlib.sha256(f"{domain}/{task_id}".encode()).digest()[:4], "big")


@dataclass(frozen=True, kw_only=True)
class Target(ABC):
    """A target benchmark: its facts as attributes, its behaviour as typed methods.

    Subclass it, implement :meth:`tasks` and :meth:`leakage`, override the other methods where the target
    differs from the defaults (no data folder, no flaw rule, the env's own reference solution, a scripted
    user), and register an instance. Its module should import nothing heavy at its top: the registry
    imports it when first read (``import trace_envs`` registers its envs).
    """

    name: str
    description: str
    domains: dict[str, str]
    """Domain name -> its ``"module:attribute"`` (a :class:`~trace_envs.core.Domain`), registered on import."""
    envs: dict[str, str]
    """Env id -> its ``"module:Class"`` entry point, registered on ``import trace_envs``."""
    kit: tuple[str, ...]
    """Modules a generated env module for this target may import (besides the standard library)."""
    helpers: tuple[str, ...] = ()
    """``"module:attribute"`` of the kit's record and world builders a generated env may use; the generation
    prompt documents each from its signature and docstring (what it returns and raises)."""
    aliases: tuple[str, ...] = ()
    family: str | None = None
    """A name that selects every target of the family at once (``tau2``: airline and retail)."""
    default_split: str = "all"
    splits: tuple[str, ...] = ("all",)
    builtin_tasks: bool = False
    """Its tasks ship with the library (no data folder needed; the pipeline's ``split`` picks a split)."""
    needs_user_model: bool = False
    """Its tasks have a simulated user played by a chat model (else a scripted one)."""
    similarity: str | None = None
    """The verdict component an evaluation reports as the task's similarity (``None``: none)."""
    env_kind: EnvKind = "tau2_target"
    """The kind its envs are registered as (``trace_envs.registry.EnvKind``): ``device_target`` for an env that
    is also a capability env with built-in tasks, else ``tau2_target``."""

    @abstractmethod
    def tasks(self, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
        """Its tasks of ``split`` from ``data`` (a folder or file, or ``None``: its built-in ones or its
        environment variable's), at most ``limit``."""

    @abstractmethod
    def leakage(self, data: str | Path | None) -> LeakageRecords:
        """Its evaluation tasks as the leakage guard reads them (the same object for the same data)."""

    def oracle(self, env: Any) -> list[str]:
        """The reference actions of a reset target env (by default the env's own ``oracle_actions()``)."""
        actions: list[str] = env.oracle_actions()
        return actions

    def flawed(self, env: Any, capabilities: Sequence[str] | None) -> list[str] | None:
        """The reference actions of a reset target env with the capabilities' deficits applied (``[]``: the
        reference itself; ``None`` capabilities: plain ``flawed``); ``None`` when it has no rule for them."""
        return None

    def check_data(self, data: str | Path | None) -> Path | None:
        """The data folder its tasks come from, checked (raises :class:`TargetDataError` naming the fix);
        ``None`` when it needs none."""
        return None

    def write_data(self, folder: Path, seed: int) -> Path | None:
        """Write generated stand-in data under ``folder`` and return the data folder to pass as ``data``
        (``None``: it needs none or cannot generate it)."""
        return None

    def default_user(self) -> Any:
        """Who plays its tasks' user when no chat model is given (``None``: its tasks script their own)."""
        return None

    def load_tasks(
        self, data: str | Path | None = None, split: str | None = None, limit: int | None = None
    ) -> TargetTasks:
        """:meth:`tasks` with its own split when ``split`` is ``None``."""
        return self.tasks(data, split or self.default_split, limit)

    def synthesis_domain(self) -> tuple[str, str, str]:
        """(name, module, attribute) of the domain a synthesised env for it plays (its first): the contract gate
        and the generation prompt read it, whatever the target's name."""
        if not self.domains:
            raise ValueError(f"target {self.name!r} declares no domain: synthesis needs one (Target.domains)")
        name, reference = next(iter(self.domains.items()))
        module, _, attribute = reference.partition(":")
        return name, module, attribute

    def own_kit(self) -> tuple[str, ...]:
        """The kit modules only this target's modules import (not the contract every env imports)."""
        return tuple(m for m in self.kit if m != "trace_envs.core")


@dataclass(frozen=True, kw_only=True)
class _ReferencedTarget(Target):
    """A target declared the old way, its behaviour as ``"module:attribute"`` references (see :func:`TargetSpec`)."""

    references: dict[str, str | None]

    def _call(self, role: str, *args: Any) -> Any:
        reference = self.references.get(role)
        return None if reference is None else resolve(reference)(*args)

    def tasks(self, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
        found: TargetTasks = self._call("tasks", self, data, split, limit)
        return found

    def leakage(self, data: str | Path | None) -> LeakageRecords:
        records: LeakageRecords = self._call("leakage", self, data)
        return records

    def flawed(self, env: Any, capabilities: Sequence[str] | None) -> list[str] | None:
        flawed: list[str] | None = self._call("flaws", env, capabilities)
        return flawed

    def check_data(self, data: str | Path | None) -> Path | None:
        folder: Path | None = self._call("check_data", self, data)
        return folder

    def write_data(self, folder: Path, seed: int) -> Path | None:
        written: Path | None = self._call("generate_data", self, folder, seed)
        return written


def TargetSpec(
    *,
    tasks: str,
    leakage: str,
    flaws: str | None = None,
    check_data: str | None = None,
    generate_data: str | None = None,
    evaluation: str | None = None,
    data_variable: str | None = None,
    **facts: Any,
) -> Target:
    """Deprecated for one release: a target from the old spec's ``"module:attribute"`` references (each function
    gets the target first, ``flaws`` excepted); write a :class:`Target` subclass instead (docs/plugins.md)."""
    warn_renamed("TargetSpec(tasks=..., leakage=..., ...)", "a Target subclass with tasks() and leakage() methods")
    references = {"tasks": tasks, "leakage": leakage, "flaws": flaws, "check_data": check_data}
    return _ReferencedTarget(references={**references, "generate_data": generate_data}, **facts)


_REGISTRY: dict[str, Target] = {}
_STATE = {"loading": False, "loaded": False}
_LOCK = threading.RLock()


def register_target(spec: Target | str) -> Target:
    """Register a target (a spec, or a ``"module:attribute"`` naming one); again with an equal spec does
    nothing, another spec under a taken name or alias is an error naming both."""
    found = resolve(spec) if isinstance(spec, str) else spec
    if not isinstance(found, Target):
        raise TypeError(f"{spec!r} is not a Target but a {type(found).__name__}")
    for name in (found.name, *found.aliases):
        other = _lookup(name)
        if other is not None and other != found:
            raise ValueError(f"target name {name!r} is taken by the target {other.name!r}; choose another")
    _REGISTRY[found.name] = found
    return found


def _lookup(name: str) -> Target | None:
    return next((s for s in _REGISTRY.values() if name == s.name or name in s.aliases), None)


def _load() -> None:
    """Register the shipped targets, then every ``trace_envs.targets`` entry point (once per process; a
    thread that asks meanwhile waits for the whole registry)."""
    if _STATE["loaded"]:
        return
    with _LOCK:  # the loading thread re-enters (a plugin that imports trace_envs) and sees what is registered
        if _STATE["loaded"] or _STATE["loading"]:
            return
        _STATE["loading"] = True
        try:
            _load_all()
        finally:
            _STATE["loaded"], _STATE["loading"] = True, False


def _load_all() -> None:
    """The shipped targets (trace-envs's entry points: a stale install raises, naming the reinstall), then the
    others, each package's failure a warning naming it."""
    for point in group_entry_points(ENTRY_POINT_GROUP, "the shipped targets"):
        if is_builtin(point):
            _register_point(point.load())
            continue
        try:
            _register_point(point.load())
        except Exception as exc:  # one broken third-party package must not break the others
            warnings.warn(
                f"trace_envs: the {ENTRY_POINT_GROUP!r} entry point {point.name!r} ({point.value}) failed, so its "
                f"target is not registered: {type(exc).__name__}: {exc}",
                RuntimeWarning,
                stacklevel=2,
            )


def _register_point(found: Any) -> None:
    """Register what a ``trace_envs.targets`` entry point names: a target (or its reference), or a callable
    returning several."""
    for spec in found() if callable(found) and not isinstance(found, Target) else [found]:
        register_target(spec)


def targets() -> dict[str, Target]:
    """Every registered target by name, in registration order (the shipped ones first)."""
    _load()
    return dict(_REGISTRY)


def target(name: str) -> Target:
    """The registered target called ``name`` (not an alias: a target's name is what folders and reports use);
    a ``ValueError`` listing the names if none is."""
    _load()
    found = _REGISTRY.get(name)
    if found is None:
        raise ValueError(f"unknown target {name!r}; use one of {', '.join(_REGISTRY)}")
    return found


def select_targets(name: str) -> list[Target]:
    """The targets a name selects: one target (by name or alias), or every target of a family."""
    _load()
    family = [s for s in _REGISTRY.values() if s.family == name]
    if family:
        return family
    found = _lookup(name)
    if found is None:
        names = [*_REGISTRY, *dict.fromkeys(a for s in _REGISTRY.values() for a in (*s.aliases, s.family) if a)]
        raise ValueError(f"unknown target {name!r}; expected one of: {', '.join(names)}")
    return [found]


def target_env_ids() -> dict[str, str]:
    """Every target env id -> its entry point (the envs that play a target's tasks)."""
    return {env_id: entry for spec in targets().values() for env_id, entry in spec.envs.items()}


def target_env_kinds() -> dict[str, EnvKind]:
    """Every target env id -> the kind it registers as (its spec's ``env_kind``)."""
    return {env_id: spec.env_kind for spec in targets().values() for env_id in spec.envs}


def target_of_domain(domain: str) -> Target | None:
    """The target whose tasks run on ``domain`` (``None``: no target does)."""
    return next((s for s in targets().values() if domain in s.domains), None)


def target_of_env(env: Any) -> Target | None:
    """The target whose env class ``env`` (an unwrapped env) is an instance of; ``None`` for any other env.
    Only classes already imported are compared (an instance's class is)."""
    for spec in targets().values():
        for entry in spec.envs.values():
            module, _, attribute = entry.partition(":")
            cls = getattr(sys.modules.get(module), attribute, None)
            if isinstance(cls, type) and isinstance(env, cls):
                return spec
    return None


def targets_importing(modules: Iterable[str]) -> list[str]:
    """The targets whose own kit holds one of ``modules`` (for telling a module's target from its imports)."""
    found = []
    for spec in targets().values():
        if any(m == k or m.startswith(k + ".") for m in modules for k in spec.own_kit()):
            found.append(spec.name)
    return found


def target_domains() -> dict[str, str]:
    """Every target's domains: name -> ``"module:attribute"`` (what ``import trace_envs`` registers)."""
    return {name: factory for spec in targets().values() for name, factory in spec.domains.items()}


__all__ = [
    "ENTRY_POINT_GROUP",
    "LeakageRecords",
    "LeakageTask",
    "Target",
    "TargetDataError",
    "TargetSpec",
    "TargetTask",
    "TargetTasks",
    "register_target",
    "select_targets",
    "target",
    "target_domains",
    "target_env_ids",
    "target_env_kinds",
    "target_of_domain",
    "target_of_env",
    "targets",
    "targets_importing",
    "task_seed",
]
