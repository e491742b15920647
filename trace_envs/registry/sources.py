"""Where envs come from: the targets, installed packages (entry points) and folders of env modules.

- :func:`register_envs` (run by ``import trace_envs``) registers the domains of the ``trace_envs.domains``
  entry points, every registered target's domains and envs (:mod:`trace_envs.registry.targets`), every installed
  plugin and ``$TRACE_ENVS_PATH``, and sets the spot checks' text scan (:func:`leak_scan`: the
  ``trace_envs.text_scans`` entry points). The library's own domains, targets and scan register through these
  entry points as a plugin's do (:mod:`trace_envs.registry.builtins`), so nothing here names a higher layer.

- A package registers its envs through the ``trace_envs.envs`` entry-point group. Each entry point
  names a zero-argument callable that registers envs and domains (with
  :func:`trace_envs.register_env` / :func:`~trace_envs.register_domain`), or a module that
  does so when imported. ``generated_envs`` (the shipped envs) is one such package; installed code is
  trusted and runs in this process.
- :func:`load_envs` registers each env module of a folder as a boxed id (:mod:`trace_envs.box`): its text
  is read once, and ``gym.make`` returns a proxy that plays the module's env in a box process; nothing of
  the folder is imported here. Only ``load_envs(folder, boxed=False)`` imports a folder of your own code
  into this process (never a synthesis output folder, never one of ``$TRACE_ENVS_PATH``).
- ``$TRACE_ENVS_PATH`` (folders separated by ``os.pathsep``) is loaded, boxed, by ``import trace_envs``, so
  worker processes (TRL/accelerate, rollout workers) see the same envs as the process that started them.
- A folder written by ``trace-envs synthesize`` holds a ``manifest.json`` with each validated module's
  sha256; such a folder loads only if every module is the one validated (an edited module is refused
  until ``trace-envs validate`` records it again), and its boxes run the exact text whose sha256 the
  manifest records.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Collection, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym

from ..core.env import CapabilityEnv, defined_envs
from ..core.spot_checks import set_text_scan
from ..problems import warn_renamed
from .builtins import builtin_entry_points, group_entry_points, is_builtin
from .envs import env_kind, register_domain, register_env
from .ids import boxed_twin_id, capability_env_id, env_id_problem
from .targets import target_domains, target_env_ids, target_env_kinds

if TYPE_CHECKING:  # the manifest module imports the model clients' Usage: loaded when a folder is, not on import
    from .manifest import Manifest

ENTRY_POINT_GROUP = "trace_envs.envs"
"""The entry-point group of env plugins (the box reads the same group, as ``trace_envs.box.protocol.PLUGIN_GROUP``)."""
PATH_VARIABLE = "TRACE_ENVS_PATH"
DOMAIN_GROUP = "trace_envs.domains"
"""The entry-point group of domains: each entry point's name is a domain's, its value the domain's
``"module:attribute"`` (registered, not imported: :func:`get_domain` imports it). trace-envs declares its built-in
domains no target plays (``toy_shop``) here; the targets' own domains come with their targets."""
TEXT_SCAN_GROUP = "trace_envs.text_scans"
"""The entry-point group of the spot checks' text scans (a :data:`trace_envs.core.spot_checks.TextScan` each):
trace-envs declares the leakage gate's scan of a boxed env's text for evaluation data here."""
_LOADED_FOLDERS: dict[Path, list[str]] = {}
"""Each folder :func:`load_envs` loaded, in load order, and the ids it registered."""
_TRUSTED_FOLDERS: set[Path] = set()
"""The folders loaded with ``boxed=False`` (imported into this process)."""


_TEXT_SCANS: list[Any] = []
"""The loaded text scans (trace-envs's first), filled at the first spot check that scans."""


def builtin_domains() -> dict[str, str]:
    """Every ``trace_envs.domains`` entry point: domain name -> ``"module:attribute"`` (trace-envs's first; a
    stale install that lacks its own raises, naming the reinstall)."""
    return {point.name: point.value for point in group_entry_points(DOMAIN_GROUP, "the built-in domains")}


def text_scans() -> list[Any]:
    """The ``trace_envs.text_scans`` entry points, loaded once (trace-envs's first; about 0.2 s, at the first
    spot check that scans); another package's that fails to load is skipped with a warning naming it."""
    if not _TEXT_SCANS:
        found: list[Any] = []
        for point in group_entry_points(TEXT_SCAN_GROUP, "the spot checks' leak scan"):
            found += [point.load()] if is_builtin(point) else _load_or_warn(point, "spot checks do not run its scan")
        _TEXT_SCANS[:] = found
    return list(_TEXT_SCANS)


def _load_or_warn(point: Any, consequence: str) -> list[Any]:
    """``[point.load()]``, or ``[]`` with a warning naming the entry point (one broken package breaks nothing else)."""
    try:
        return [point.load()]
    except Exception as exc:
        warnings.warn(
            f"trace_envs: the {point.group!r} entry point {point.name!r} ({point.value}) failed, so {consequence}: "
            f"{type(exc).__name__}: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
        return []


def leak_scan(env: Any, seed: int, paced: Sequence[tuple[str, str]] = ()) -> str | None:
    """Every text scan (:func:`text_scans`) on ``env``'s text at ``seed`` and the replies of its paced episodes
    there, ``paced``: the first one's finding, or ``None``."""
    for scan in text_scans():
        found = cast("str | None", scan(env, seed, paced))
        if found is not None:
            return found
    return None


def register_envs() -> None:
    """Register the ``trace_envs.domains`` domains, every target's domains and envs and the spot checks' leak scan,
    then load the plugins and ``$TRACE_ENVS_PATH``; idempotent, and imports no env module of ours (plugins decide
    what they import)."""
    for name, factory in {**builtin_domains(), **target_domains()}.items():
        register_domain(name, factory)
    kinds = target_env_kinds()
    for env_id, entry_point in target_env_ids().items():
        register_env(env_id, entry_point, env_kind=kinds[env_id])
    set_text_scan(leak_scan)
    load_plugins()
    load_env_path()


def __getattr__(name: str) -> object:
    """The deprecated ``BUILTIN_DOMAINS`` and ``LEAK_SCAN`` (kept for one release), read off the entry points."""
    if name == "BUILTIN_DOMAINS":
        warn_renamed("trace_envs.registry.sources.BUILTIN_DOMAINS", f"the {DOMAIN_GROUP!r} entry points")
        return {p.name: p.value for p in builtin_entry_points(DOMAIN_GROUP, "the built-in domains")}
    if name == "LEAK_SCAN":
        warn_renamed("trace_envs.registry.sources.LEAK_SCAN", f"the {TEXT_SCAN_GROUP!r} entry points")
        return builtin_entry_points(TEXT_SCAN_GROUP, "the spot checks' leak scan")[0].value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_plugins() -> list[str]:
    """Load every entry point of the ``trace_envs.envs`` group (in name order); returns their names.
    A plugin that fails is reported with a warning naming it, and the others still load."""
    loaded = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: (p.name, p.value)):
        try:
            target = point.load()
            if callable(target):
                target()
        except Exception as exc:  # one broken third-party package must not break ``import trace_envs``
            warnings.warn(
                f"trace_envs: the {ENTRY_POINT_GROUP!r} entry point {point.name!r} ({point.value}) failed, so its "
                f"envs are not registered: {type(exc).__name__}: {exc}",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        loaded.append(point.name)
    return loaded


def plugin_packages() -> list[ModuleType]:
    """The top-level packages of the loaded ``trace_envs.envs`` entry points (``generated_envs`` for the
    shipped envs): where plugin code lives, e.g. for a sandbox's import path."""
    names = {point.value.split(":")[0].split(".")[0] for point in entry_points(group=ENTRY_POINT_GROUP)}
    return [sys.modules[name] for name in sorted(names) if name in sys.modules]


def allow_weaker_box() -> None:
    """``--weaker-box``: boxes of this process and its workers start with the kernel layers this host has,
    instead of refusing without one (:func:`trace_envs.box.allow_weaker_box`; the reports name the layers)."""
    from ..box import allow_weaker_box as allow

    allow()


def load_envs(
    path: str | os.PathLike[str], *, id_prefix: str | None = None, boxed: bool = True, weaker_box: bool = False
) -> list[str]:
    """Register the env of every ``*.py`` module of the folder ``path`` (names starting with ``_`` are
    skipped) as a boxed id; returns their ids, in file order.

    Each module is read once, as UTF-8 text, and runs only in box processes, never in this one: that text
    (its sha256 is the class's ``source_sha256``) is what every box runs, whatever the file holds later.
    A boxed module defines exactly one concrete ``CapabilityEnv`` subclass and imports only installed
    packages (not its neighbours in the folder). A synthesis output folder (one with a trace-envs
    ``manifest.json``) loads only the modules its manifest vouches for.

    ``boxed=False`` imports the modules of a folder of **your own, trusted** code into this process instead
    (each may then define several envs); it is refused for a synthesis output folder, and
    ``$TRACE_ENVS_PATH`` never uses it.

    The id is the module's ``ENV_ID`` when it sets one (then it must define exactly one env), else
    ``trace/<capability name with dashes>-v0``. Two folders may hold files of the same name (imported, they
    get names unique to the folder); loading a folder again registers nothing new. With
    ``id_prefix`` the ids are ``trace/<prefix>-<capability>-v0``, so folders that train the same capability
    (e.g. one per target domain) can be loaded side by side.

    Boxes need the kernel layers of :mod:`trace_envs.box.layers`; where this host lacks one, loading fails
    naming it, unless ``weaker_box=True`` (for this whole process: :func:`trace_envs.box.allow_weaker_box`).
    """
    if weaker_box:
        allow_weaker_box()
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise NotADirectoryError(f"load_envs: {folder} is not a folder; pass the folder that holds the env modules")
    from .manifest import synthesis_manifest

    manifest = synthesis_manifest(folder)
    if manifest is not None and boxed is False:
        raise ValueError(
            f"load_envs: {folder} is a synthesis output folder, whose modules only ever run boxed; leave boxed out"
        )
    if boxed:
        boxed_ids = _load_boxed(folder, manifest, id_prefix)
        _LOADED_FOLDERS.setdefault(folder, boxed_ids)
        return boxed_ids
    prefix = "trace_envs_loaded_" + hashlib.sha256(str(folder).encode("utf-8")).hexdigest()[:12]
    ids: list[str] = []
    for file in sorted(folder.glob("*.py")):
        if file.name.startswith("_"):
            continue
        module = _import_file(f"{prefix}_{file.stem}", file)
        ids += _register_module(module, file, id_prefix)
    _LOADED_FOLDERS.setdefault(folder, ids)
    _TRUSTED_FOLDERS.add(folder)
    return ids


def _load_boxed(folder: Path, manifest: Manifest | None, id_prefix: str | None) -> list[str]:
    """Register each module of ``folder`` as a boxed id (:mod:`trace_envs.box`): nothing of it runs here."""
    from ..box import boxed_class
    from .manifest import UnvalidatedModule, validated_sources

    if manifest is not None:
        sources, problems = validated_sources(folder)
        if problems:
            raise UnvalidatedModule("load_envs: refusing to load " + "; ".join(problems))
    else:
        sources = {f: _module_text(f) for f in sorted(folder.glob("*.py")) if not f.name.startswith("_")}
    entries = manifest.modules if manifest is not None else {}
    ids = []
    for file, source in sources.items():
        try:
            cls = boxed_class(source, str(file))
        except ImportError as exc:
            if manifest is not None:
                raise
            raise ImportError(
                f"{exc}. A boxed module defines exactly one env and imports only what a box allows; split it, or "
                "load a folder of your own trusted code with load_envs(folder, boxed=False)"
            ) from exc
        entry = entries.get(file.name)
        env_id = _boxed_id(cls, file, entry.env_id if entry is not None else None, id_prefix)
        register_env(env_id, cls, env_kind="boxed")
        ids.append(env_id)
    return ids


def _boxed_id(cls: Any, file: Path, recorded: object, id_prefix: str | None) -> str:
    """The id a boxed module registers as: what its box declares (its ``ENV_ID``, else its capability's id),
    which a manifest must have recorded as it is; never an id registered to anything else (issue 34: a module
    that took ``trace/order-cancel-v0`` broke every command once its folder was on ``$TRACE_ENVS_PATH``)."""
    from .manifest import UnvalidatedModule

    declared = cls.declared_id or _default_id(cls, file)
    if recorded is not None and str(recorded) != declared:
        raise UnvalidatedModule(
            f"load_envs: {file} declares the env id {declared!r} but its manifest records {recorded!r}; "
            f"validate it again: `trace-envs validate {file}`"
        )
    env_id = _default_id(cls, file, id_prefix) if id_prefix else declared
    problem = env_id_problem(env_id, gym.registry) if env_id not in gym.registry else None
    if problem is not None:
        raise ValueError(f"load_envs: {file}: {problem}; give its capability (or ENV_ID) a plain new name")
    if env_id in gym.registry and gym.registry[env_id].entry_point is not cls:
        raise ValueError(
            f"load_envs: {file} declares the env id {env_id!r}, which is already registered to "
            f"{gym.registry[env_id].entry_point!r}; a loaded module never replaces a registered env: give its "
            "capability (or ENV_ID) a new name, or load the folder with id_prefix"
        )
    return env_id


def _module_text(file: Path) -> str:
    """A module of a folder of your own as the UTF-8 text its boxes run (read once, here)."""
    try:
        return file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ImportError(f"load_envs: {file} is not UTF-8 text; save it as UTF-8") from None


def loaded_folders(env_ids: Collection[str] | None = None, *, boxed: bool | None = None) -> list[str]:
    """The folders :func:`load_envs` has loaded in this process, in load order (for worker processes); with
    ``env_ids``, only those that registered one of them; with ``boxed``, only those loaded that way."""
    return [
        str(f)
        for f, ids in _LOADED_FOLDERS.items()
        if (env_ids is None or set(ids) & set(env_ids)) and (boxed is None or (f not in _TRUSTED_FOLDERS) == boxed)
    ]


def load_env_path() -> list[str]:
    """Load every folder of ``$TRACE_ENVS_PATH``; returns the ids registered."""
    ids: list[str] = []
    for entry in os.environ.get(PATH_VARIABLE, "").split(os.pathsep):
        if entry.strip():
            if not Path(entry).expanduser().is_dir():
                raise NotADirectoryError(
                    f"${PATH_VARIABLE}: {entry!r} is not a folder; set it to folders of env modules separated by "
                    f"{os.pathsep!r}, or unset it"
                )
            ids += load_envs(entry, boxed=True)  # never imported here, whoever set the variable
    return ids


def _import_file(name: str, file: Path) -> ModuleType:
    """The module of ``file`` imported as ``name`` (or the one already imported under that name)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"load_envs: cannot import {file} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ImportError(f"load_envs: {file} failed to import: {type(exc).__name__}: {exc}") from exc
    return module


def _register_module(module: ModuleType, file: Path, id_prefix: str | None = None) -> list[str]:
    """Register the envs that ``module`` defines (see :func:`defined_envs`)."""
    classes = defined_envs(module)
    explicit = getattr(module, "ENV_ID", None)
    if explicit is not None and len(classes) != 1:
        raise ValueError(
            f"load_envs: {file} sets ENV_ID but defines {len(classes)} envs; ENV_ID names a module's only env "
            "(remove it to name each env after its capability)"
        )
    ids = []
    for cls in classes:
        env_id = str(explicit) if explicit is not None else _default_id(cls, file, id_prefix)
        register_env(env_id, f"{module.__name__}:{cls.__qualname__}")
        ids.append(env_id)
    return ids


def _default_id(cls: type[CapabilityEnv[Any]], file: Path, prefix: str | None = None) -> str:
    """``trace/[<prefix>-]<capability name, underscores as dashes>-v0``."""
    capability = getattr(cls, "capability", None)
    if capability is None:
        raise ValueError(
            f"load_envs: {cls.__name__} in {file} declares no capability; set capability = Capability(...)"
        )
    return capability_env_id(capability.name, prefix)


def box_installed_env(env_id: str, boxed_id: str | None = None) -> str:
    """Register a boxed twin of an installed env (a shipped one, or a plugin's): the same module's text, run in
    boxes; returns its id (``trace/<name>-boxed-v<N>`` unless ``boxed_id``). Installed envs run in-process by
    default; this is the option to box one too. It boxes capability envs run here (``env_kind`` ``capability``,
    whose module must define exactly one env and be one file); target envs (tau2, device) run in-process."""
    from ..box import boxed_class

    kind = env_kind(env_id)
    if kind != "capability":
        raise ValueError(
            f"{env_id} is not a capability env run here (its kind is {kind}); box_installed_env boxes capability "
            "envs, boxed ones are boxed already, and target envs such as tau2's and the device scenarios run in-process"
        )
    entry = gym.spec(env_id).entry_point
    module_name = entry.partition(":")[0] if isinstance(entry, str) else getattr(entry, "__module__", "")
    spec = importlib.util.find_spec(module_name) if module_name else None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        raise ValueError(f"{env_id}: its entry point {entry!r} is not a module file that can be boxed")
    source = Path(spec.origin).read_text(encoding="utf-8")
    if any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(ast.parse(source))):
        raise ValueError(
            f"{env_id}: {module_name} imports relatively (it is part of a package), so it cannot run as one file "
            "in a box; box_installed_env boxes single-file env modules"
        )
    target = boxed_id or boxed_twin_id(env_id)
    problem = env_id_problem(target, gym.registry) if target not in gym.registry else None
    if problem is not None:
        raise ValueError(f"box_installed_env: {problem}; pass another boxed_id")
    register_env(target, boxed_class(source, f"{module_name} (boxed twin of {env_id})"), env_kind="boxed")
    return target


__all__ = [
    "DOMAIN_GROUP",
    "ENTRY_POINT_GROUP",
    "PATH_VARIABLE",
    "TEXT_SCAN_GROUP",
    "allow_weaker_box",
    "box_installed_env",
    "builtin_domains",
    "defined_envs",
    "leak_scan",
    "load_env_path",
    "load_envs",
    "load_plugins",
    "loaded_folders",
    "plugin_packages",
    "register_envs",
    "text_scans",
]
