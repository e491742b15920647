"""Registering a module's env as a boxed id: its text is read once, checked, and only ever run in boxes."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path

import gymnasium as gym

from trace_envs.registry import env_kind, register_env

from .client import BoxedEnvError, BoxFailure
from .pool import default_pool
from .proxy import BoxedEnv, boxed_env_class

_CLASSES: dict[str, type[BoxedEnv]] = {}


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
    register_env(target, boxed_class(source, f"{module_name} (boxed twin of {env_id})"), env_kind="boxed")
    return target
