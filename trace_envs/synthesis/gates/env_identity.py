"""The env id a module registers as, read from its source and checked against what its box declares and
against what is already registered.

Issue 34: the manifest recorded the id the box declared, checked against the source only under
``--capability``, and one module took ``trace/order-cancel-v0``: with its folder on ``$TRACE_ENVS_PATH``
every trace-envs command failed at import. The id is now derived from the text (``ENV_ID = "..."`` when
the module sets it, else ``trace/<capability name with dashes>-v0`` from ``Capability(name="...")``, the
rule :func:`trace_envs.load_envs` applies), both must be string literals, the box must declare the same, and
an id registered to anything but this very text (a shipped env, a plugin's, another module's) is refused.
"""

from __future__ import annotations

import ast
import hashlib
from typing import Any

import gymnasium as gym

from trace_envs.registry.ids import capability_env_id, env_id_problem

from .reports import Finding

FIX_LITERAL = (
    'Write ENV_ID = "trace/<name>-v0" (or leave it out) and Capability(name="<capability>") as plain literals.'
)


def env_id_for(capability: str) -> str:
    """The id ``load_envs`` registers a module's env as: ``trace/<capability with dashes>-v0``."""
    return capability_env_id(capability)


def source_env_id(tree: ast.Module) -> str | None:
    """The id the module's text names: a top-level ``ENV_ID = "..."``, else the one ``Capability(name="...")``
    literal's :func:`env_id_for`; None when the text does not name it by literals (or names several)."""
    assigned = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and any(isinstance(t, ast.Name) and t.id == "ENV_ID" for t in _targets(node))
    ]
    if assigned:
        value = assigned[0]
        literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
        return value.value if len(assigned) == 1 and literal else None  # type: ignore[union-attr]
    names = set(_capability_names(tree))
    name = names.pop() if len(names) == 1 else None
    return env_id_for(name) if name is not None else None


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _capability_names(tree: ast.AST) -> list[str | None]:
    """The ``name=`` of every ``Capability(...)`` call (None where it is not a string literal)."""
    names: list[str | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Capability":
            value = next((k.value for k in node.keywords if k.arg == "name"), node.args[0] if node.args else None)
            literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
            names.append(value.value if literal else None)  # type: ignore[union-attr]
    return names


def declared_env_id(box_env_id: str | None, capability: str) -> str:
    """The id the box declares: its ``ENV_ID``, else the one its env's capability gives."""
    return box_env_id or env_id_for(capability)


def env_id_findings(source: str, tree: ast.Module, box_env_id: str | None, capability: str) -> list[Finding]:
    """Findings on the module's env id: not readable from the text, not what the box declares, or already
    registered to something other than this text."""
    derived = source_env_id(tree)
    if derived is None:
        return [
            Finding(
                rule="env-id-not-literal",
                subject="ENV_ID / Capability(name=...)",
                message="the env id cannot be read from the module's text (ENV_ID or the capability name is not one "
                "string literal), so what the box declares cannot be checked.",
                fix=FIX_LITERAL,
            )
        ]
    declared = declared_env_id(box_env_id, capability)
    if declared != derived:
        return [
            Finding(
                rule="env-id-mismatch",
                subject=declared,
                message=f"the box declares the env id {declared!r}, but the module's text names {derived!r}.",
                fix=FIX_LITERAL,
            )
        ]
    owner = registered_owner(derived, source)
    lookalike = lookalike_findings(derived) if derived not in gym.registry else []
    if lookalike:
        return lookalike
    if owner is not None:
        return [
            Finding(
                rule="env-id-taken",
                subject=derived,
                message=f"{derived} is already registered (to {owner}); a module never shadows a registered env.",
                fix="Name the capability (or ENV_ID) so that its id is new; `trace-envs list` shows the ids taken.",
            )
        ]
    return []


def lookalike_findings(env_id: str) -> list[Finding]:
    """A finding if ``env_id`` is not plain ASCII or reads as a registered id (``trace/order-canc\u0435l-v0``
    beside ``trace/order-cancel-v0``): :func:`trace_envs.registry.ids.env_id_problem`, the rule ``load_envs``
    applies too."""
    problem = env_id_problem(env_id, gym.registry)
    if problem is None:
        return []
    return [
        Finding(
            rule="env-id-lookalike",
            subject=env_id.encode("ascii", "backslashreplace").decode()[:60],
            message=f"{problem}.",
            fix="Name the capability (or ENV_ID) with plain ASCII letters, digits and dashes, unlike any registered id.",
        )
    ]


def registered_owner(env_id: str, source: str) -> str | None:
    """What ``env_id`` is registered to, unless it is free or registered to a boxed class of this very text."""
    if env_id not in gym.registry:
        return None
    entry: Any = gym.registry[env_id].entry_point
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if isinstance(entry, type) and getattr(entry, "source_sha256", None) == digest:
        return None
    return entry if isinstance(entry, str) else f"{getattr(entry, '__module__', '?')}.{getattr(entry, '__name__', '?')}"
