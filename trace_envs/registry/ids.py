"""Env ids, formed and read in one place: ``trace/<name>-v<N>`` (the ``trace`` namespace of Gymnasium's registry).

Every id the library makes (a capability's, a target's, a prefixed folder's, a boxed twin's, a candidate's) is
made here, and every id it reads apart is read here, so the id rule is one rule (``tests/test_registry_ids.py``
scans the package for any other). It imports nothing, so every layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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


ID_CHARACTERS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:-]*")
"""What a module's env id may hold: ASCII letters, digits and ``_ . / : -`` (no look-alike letter of another script,
no invisible or control character)."""
CONFUSABLES = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"), ("_", "-"))
"""ASCII spellings a reader takes for one another, folded by :func:`id_skeleton`."""


def id_skeleton(value: str) -> str:
    """``value`` as a reader sees it: lower case, with :data:`CONFUSABLES` folded (``order-cance1`` is ``order-cancel``)."""
    folded = value.lower()
    for spelling, seen in CONFUSABLES:
        folded = folded.replace(spelling, seen)
    return folded


def escaped(text: str) -> str:
    """``text`` with every character outside printable ASCII written as its escape (``\\u0435``), cut to 80."""
    return "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode() for c in text[:80])


def env_id_problem(value: str, registered: Iterable[str]) -> str | None:
    """Why a module may not register as ``value`` (issue 34, a look-alike of a shipped id), or None: it holds a
    character outside :data:`ID_CHARACTERS` (``trace/order-canc\u0435l-v0``, a Cyrillic ie), or it reads as one of
    the ``registered`` ids (:func:`id_skeleton`), so every list and report would show two envs by one name."""
    if not value.isascii() or ID_CHARACTERS.fullmatch(value) is None:
        odd = next((c for c in value if not c.isascii() or ID_CHARACTERS.fullmatch(f"a{c}") is None), "")
        return f"the env id '{escaped(value)}' holds '{escaped(odd)}': an env id is ASCII letters, digits and _ . / : -"
    skeleton = id_skeleton(value)
    twin = next((other for other in registered if other != value and id_skeleton(other) == skeleton), None)
    if twin is not None:
        return f"the env id {value!r} reads as {twin!r}, which is registered: a reader could not tell them apart"
    return None


def candidate_env_id(source_sha256: str) -> str:
    """The temporary id a module under synthesis registers as inside its box (the first 12 hex of its sha256)."""
    return env_id(f"candidate-{source_sha256[:12]}")


__all__ = [
    "NAMESPACE",
    "boxed_twin_id",
    "candidate_env_id",
    "capability_env_id",
    "env_id",
    "env_id_problem",
    "id_skeleton",
    "is_trace_id",
    "parse_env_id",
    "prefixed_id",
]
