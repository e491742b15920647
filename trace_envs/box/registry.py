"""Registering a module's env as a boxed id: its text is read once, checked, and only ever run in boxes."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
from pathlib import Path

import gymnasium as gym

from trace_envs.registry import env_kind, register_env

from .client import BoxedEnvError, BoxFailure
from .pool import default_pool
from .proxy import BoxedEnv, boxed_env_class

_CLASSES: dict[str, type[BoxedEnv]] = {}

ID_CHARACTERS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:-]*")
"""What a module's env id may hold: ASCII letters, digits and ``_ . / : -`` (no look-alike letter of another script,
no invisible or control character)."""
CONFUSABLES = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"), ("_", "-"))
"""ASCII spellings a reader takes for one another, folded by :func:`id_skeleton`."""


def id_skeleton(env_id: str) -> str:
    """``env_id`` as a reader sees it: lower case, with :data:`CONFUSABLES` folded (``order-cance1`` is ``order-cancel``)."""
    folded = env_id.lower()
    for spelling, seen in CONFUSABLES:
        folded = folded.replace(spelling, seen)
    return folded


def escaped(text: str) -> str:
    """``text`` with every character outside printable ASCII written as its escape (``\\u0435``), cut to 80."""
    return "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode() for c in text[:80])


def env_id_problem(env_id: str) -> str | None:
    """Why a module may not register as ``env_id`` (issue 34, a look-alike of a shipped id), or None: it holds a
    character outside :data:`ID_CHARACTERS` (``trace/order-canc\u0435l-v0``, a Cyrillic ie), or it reads as an
    id registered already (:func:`id_skeleton`), so every list and report would show two envs by one name."""
    if not env_id.isascii() or ID_CHARACTERS.fullmatch(env_id) is None:
        odd = next((c for c in env_id if not c.isascii() or ID_CHARACTERS.fullmatch(f"a{c}") is None), "")
        return (
            f"the env id '{escaped(env_id)}' holds '{escaped(odd)}': an env id is ASCII letters, digits and _ . / : -"
        )
    skeleton = id_skeleton(env_id)
    twin = next((other for other in gym.registry if other != env_id and id_skeleton(other) == skeleton), None)
    if twin is not None:
        return f"the env id {env_id!r} reads as {twin!r}, which is registered: a reader could not tell them apart"
    return None


def boxed_class(source: str, origin: str) -> type[BoxedEnv]:
    """The :class:`BoxedEnv` class of the module ``source`` (one box is started to read what it declares, and
    kept in the pool for the first episode); the same class for the same text, wherever it was read (so a
    folder copied elsewhere and loaded again registers nothing new)."""
    key = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if key not in _CLASSES:
        boxes = default_pool()
        try:
            box = boxes.acquire(source, {})
        except (BoxedEnvError, BoxFailure) as exc:
            raise ImportError(f"{origin or 'the module'} failed in its box: {exc}") from exc
        boxes.release(box, source, {})
        _CLASSES[key] = boxed_env_class(source, box.ready, origin=origin)
    return _CLASSES[key]


def box_installed_env(env_id: str, boxed_id: str | None = None) -> str:
    """Register a boxed twin of an installed env (a shipped one, or a plugin's): the same module's text, run in
    boxes; returns its id (``trace/<name>-boxed-v<N>`` unless ``boxed_id``). Installed envs run in-process by
    default; this is the option to box one too. It boxes capability envs run here (``env_kind`` ``capability``,
    whose module must define exactly one env and be one file); target envs (tau2, device) run in-process."""
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
    name, _, version = env_id.rpartition("-v")
    target = boxed_id or f"{name}-boxed-v{version}"
    problem = env_id_problem(target) if target not in gym.registry else None
    if problem is not None:
        raise ValueError(f"box_installed_env: {problem}; pass another boxed_id")
    register_env(target, boxed_class(source, f"{module_name} (boxed twin of {env_id})"), env_kind="boxed")
    return target
