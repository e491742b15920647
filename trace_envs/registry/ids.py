"""Env ids, formed and read in one place: ``trace/<name>-v<N>`` (the ``trace`` namespace of Gymnasium's registry).

Every id the library makes (a capability's, a target's, a prefixed folder's, a boxed twin's, a candidate's) is
made here, and every id it reads apart is read here, so the id rule is one rule (``tests/test_registry_ids.py``
scans the package for any other). It imports nothing, so every layer may use it.
"""

from __future__ import annotations

import re

NAMESPACE = "trace"
"""The Gymnasium namespace of every id registered through :func:`trace_envs.register_env`."""
_ID = re.compile(r"^(?:(?P<namespace>[\w:.-]+)/)?(?P<name>[\w:.-]+?)(?:-v(?P<version>\d+))?$")


def env_id(name: str, version: int = 0) -> str:
    """The id of the env called ``name`` (dashes, no namespace) at ``version``: ``trace/<name>-v<version>``."""
    return f"{NAMESPACE}/{name}-v{version}"


def capability_env_id(capability: str, prefix: str | None = None) -> str:
    """The id a module's env registers as when it sets no ``ENV_ID``: ``trace/<capability with dashes>-v0``, or
    ``trace/<prefix>-<capability with dashes>-v0`` for a folder loaded with ``id_prefix``."""
    name = capability.replace("_", "-")
    return env_id(f"{prefix}-{name}" if prefix else name)


def parse_env_id(value: str) -> tuple[str | None, str, int | None]:
    """``(namespace, name, version)`` of an id (Gymnasium's grammar: ``[namespace/]name[-vN]``); a ``ValueError``
    for text that is not one."""
    match = _ID.match(value)
    if match is None:
        raise ValueError(f"{value!r} is not an env id: expected 'trace/<name>-v0'")
    version = match.group("version")
    return match.group("namespace"), match.group("name"), None if version is None else int(version)


def is_trace_id(value: str) -> bool:
    """Whether ``value`` lies in the ``trace/`` namespace (what ``trace_envs.list_envs`` lists)."""
    return value.startswith(f"{NAMESPACE}/")


def prefixed_id(value: str, prefix: str) -> str:
    """``value`` with ``prefix`` before its name (``trace/x-v0``, ``a`` -> ``trace/a-x-v0``): the id a module's env
    gets in a folder loaded with ``id_prefix``."""
    _, name, version = parse_env_id(value)
    return env_id(f"{prefix}-{name}", version or 0)


def boxed_twin_id(value: str) -> str:
    """The id of an installed env's boxed twin: ``trace/<name>-boxed-v<N>`` for ``trace/<name>-v<N>``."""
    _, name, version = parse_env_id(value)
    return env_id(f"{name}-boxed", version or 0)


def candidate_env_id(source_sha256: str) -> str:
    """The temporary id a module under synthesis registers as inside its box (the first 12 hex of its sha256)."""
    return env_id(f"candidate-{source_sha256[:12]}")


__all__ = [
    "NAMESPACE",
    "boxed_twin_id",
    "candidate_env_id",
    "capability_env_id",
    "env_id",
    "is_trace_id",
    "parse_env_id",
    "prefixed_id",
]
