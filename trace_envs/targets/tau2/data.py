"""Load a tau2-format domain directory (db.json, tasks.json, policy.md, split_tasks.json) from the user's files.

The path comes from an argument or from ``$TRACE_ENVS_TAU2_DATA``; either may name the domain
directory itself or a folder holding ``<domain>/`` directories (tau2's ``data/tau2/domains`` layout,
or ``shared/data/tau2``). Nothing of the benchmark is shipped with trace-envs.
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from trace_envs.registry.targets import TargetDataError

from .tasks import TaskSplits, Tau2Task

if TYPE_CHECKING:
    from trace_envs.domains.tau2_common import Tau2Domain

DATA_ENV_VAR = "TRACE_ENVS_TAU2_DATA"
REQUIRED_FILES = ("db.json", "tasks.json", "policy.md")
GUIDELINES_NAME = "simulation_guidelines.md"

DOMAIN_OBJECTS: dict[str, str] = {
    "retail": "trace_envs.domains.retail:RETAIL",
    "airline": "trace_envs.domains.airline:AIRLINE",
}


def tau2_domain(name: str) -> Tau2Domain[Any]:
    """The domain object for a tau2 domain name (``retail`` or ``airline``)."""
    if name not in DOMAIN_OBJECTS:
        raise KeyError(f"unknown tau2 domain {name!r}; known: {', '.join(DOMAIN_OBJECTS)}")
    module_name, _, attribute = DOMAIN_OBJECTS[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(f"the tau2 {name} domain module {module_name} is not available: {exc}") from exc
    domain: Tau2Domain[Any] = getattr(module, attribute)
    return domain


class Tau2DataError(TargetDataError):
    """A tau2 data directory or file is missing or malformed; the message says which and how to fix it."""


def resolve_domain_dir(path: str | os.PathLike[str] | None, domain: str | None = None) -> Path:
    """The directory holding ``db.json`` for ``domain``, from ``path`` or ``$TRACE_ENVS_TAU2_DATA``."""
    if path is None:
        env = os.environ.get(DATA_ENV_VAR)
        if not env:
            raise Tau2DataError(
                "no tau2 data folder given: pass one (--data DIR on the command line, data: in the pipeline config, data_dir= "
                f"in Python) or set ${DATA_ENV_VAR}: a folder holding {'/'.join(REQUIRED_FILES)} or <domain>/ "
                "folders such as retail/ and airline/ (tau2-bench's data/tau2/domains, or a generated one that "
                "`trace-envs tau2-generate DIR` writes)"
            )
        path = env
    base = Path(path).expanduser()
    if not base.is_dir():
        raise Tau2DataError(f"tau2 data directory {base} does not exist")
    if domain is not None and not (base / "db.json").exists():
        for candidate in (base / domain, base / "domains" / domain):
            if candidate.is_dir():
                return candidate
    return base  # a domain directory; missing files are reported by name when loaded


@dataclass
class Tau2DomainData:
    """The files of one tau2 domain directory, parsed on first use."""

    path: Path
    domain: str

    _tasks: list[Tau2Task] | None = field(default=None, repr=False)

    def file(self, name: str) -> Path:
        target = self.path / name
        if not target.is_file():
            raise Tau2DataError(
                f"tau2 domain directory {self.path} lacks {name}: a tau2 domain folder needs "
                f"{', '.join(REQUIRED_FILES)} (and optionally split_tasks.json)"
            )
        return target

    @property
    def db_path(self) -> Path:
        return self.file("db.json")

    def load_db(self, domain: Tau2Domain[Any]) -> Any:
        """A fresh database from ``db.json``, validated as ``domain``'s state. A file that is not JSON, or
        not that domain's database (e.g. the other domain's), raises :class:`Tau2DataError` in one line."""
        path = self.db_path
        raw = _read_json(path)
        try:
            return domain.state_model.model_validate(raw)
        except ValidationError as exc:
            raise Tau2DataError(_db_problem(path, raw, domain, exc)) from None

    @cached_property
    def policy(self) -> str:
        return self.file("policy.md").read_text(encoding="utf-8")

    @cached_property
    def tasks(self) -> list[Tau2Task]:
        raw = _read_json(self.file("tasks.json"))
        try:
            return TypeAdapter(list[Tau2Task]).validate_python(raw)
        except ValidationError as exc:
            raise Tau2DataError(f"{self.path / 'tasks.json'} is not a list of tau2 tasks: {exc}") from None

    @cached_property
    def task_index(self) -> dict[str, Tau2Task]:
        return {task.id: task for task in self.tasks}

    def task(self, task_id: str) -> Tau2Task:
        try:
            return self.task_index[str(task_id)]
        except KeyError:
            ids = list(self.task_index)
            raise KeyError(f"no task {task_id!r} in {self.path / 'tasks.json'}; ids run {ids[0]}..{ids[-1]}") from None

    @cached_property
    def splits(self) -> TaskSplits:
        """``split_tasks.json`` if present, else every task in ``base``."""
        target = self.path / "split_tasks.json"
        if not target.is_file():
            return TaskSplits(base=[task.id for task in self.tasks])
        return TaskSplits.model_validate(_read_json(target))

    def task_ids(self, split: str = "base") -> list[str]:
        ids = getattr(self.splits, split, None)
        if ids is None:
            raise ValueError(f"unknown split {split!r}: use train, test or base")
        return [str(task_id) for task_id in (ids or [task.id for task in self.tasks])]

    def guidelines(self, path: str | os.PathLike[str] | None = None) -> str:
        """The user-simulator guidelines text (tau2's ``simulation_guidelines.md``) from the user's files."""
        options = (
            [Path(path)]
            if path is not None
            else [
                self.path / GUIDELINES_NAME,
                self.path.parent / "user_simulator" / GUIDELINES_NAME,
                self.path.parent.parent / "user_simulator" / GUIDELINES_NAME,
            ]
        )
        for option in options:
            if option.is_file():
                return option.read_text(encoding="utf-8")
        raise Tau2DataError(
            f"user-simulator guidelines not found (looked at {', '.join(map(str, options))}): pass "
            f"user_guidelines=<path to tau2's data/tau2/user_simulator/{GUIDELINES_NAME}>"
        )


def load_domain_data(path: str | os.PathLike[str] | None = None, domain: str | None = None) -> Tau2DomainData:
    """A :class:`Tau2DomainData` for ``domain`` (checked: db.json, tasks.json and policy.md exist)."""
    directory = resolve_domain_dir(path, domain)
    name = domain or directory.name
    data = Tau2DomainData(path=directory, domain=name)
    for required in REQUIRED_FILES:
        data.file(required)
    return data


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise Tau2DataError(f"{path} is not valid JSON ({exc}): restore it from your tau2-bench copy") from None


def _db_problem(path: Path, raw: Any, domain: Tau2Domain[Any], exc: ValidationError) -> str:
    """Why ``raw`` is not ``domain``'s database, naming the other tau2 domain when the file is its database."""
    expected = sorted(domain.state_model.model_fields)
    if isinstance(raw, dict):
        keys = sorted(raw)
        for other in DOMAIN_OBJECTS:
            if other != domain.name and keys == sorted(tau2_domain(other).state_model.model_fields):
                return (
                    f"{path} is the tau2 {other} database (keys {', '.join(keys)}), not the {domain.name} one: "
                    f"use domain {other!r} or point at the {domain.name} folder"
                )
    errors = exc.errors()
    first = errors[0]
    where = ".".join(map(str, first["loc"])) or "(top level)"
    more = f" and {len(errors) - 1} more problem(s)" if len(errors) > 1 else ""
    return (
        f"{path} is not a tau2 {domain.name} database ({where}: {first['msg']}{more}; expected top-level keys "
        f"{', '.join(expected)}): restore it from your tau2-bench copy"
    )
