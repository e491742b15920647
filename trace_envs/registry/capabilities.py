"""The capability registry: every capability a registered capability env declares (``CapabilityEnv.capability``).

A capability has one home, its env's declaration (name, description, optional probe and flaw rules per target
kind). Analysis (the known dictionary, the probes), flawed policies on target envs and the CLI read it here, so a
new capability is one new env module and nothing else. Target-benchmark envs declare no trainable
capability and are left out; envs outside the ``trace/`` namespace count once their module is imported (a
user's own, after ``--import``). Env classes are imported on first use, not on ``import trace_envs``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache
from typing import Any

import gymnasium as gym

from ..core.capability import Capability
from .envs import env_class, resolve
from .ids import is_trace_id
from .targets import target_env_ids


def capability_envs() -> dict[str, list[str]]:
    """The env ids declaring each capability, by capability name (sorted)."""
    return {name: [env_id for env_id, _ in found] for name, found in _declarations(_registry_key()).items()}


def capabilities() -> dict[str, Capability]:
    """Every declared capability by name (sorted). Where several envs declare one name, the declaration that
    carries a probe or a flaw rule is its home; two different homes are an error naming both envs."""
    return dict(_capabilities(_registry_key()))


def get_capability(name: str) -> Capability:
    """The declared capability called ``name``; a ``KeyError`` listing the declared names if none is."""
    found = capabilities()
    if name not in found:
        raise KeyError(f"no registered env declares the capability {name!r}; declared: {', '.join(found)}")
    return found[name]


def probes() -> dict[str, Callable[..., Any]]:
    """The probe (a :class:`trace_envs.domains.probing.Probe`) of every capability that declares one, by name;
    a ``"module:function"`` reference is imported here."""
    table: dict[str, Callable[..., Any]] = {}
    for name, capability in capabilities().items():
        if capability.probe is not None:
            table[name] = _resolved(capability.probe)
    return table


def flaw_rules(kind: str) -> dict[str, Callable[..., Any]]:
    """The flaw rule for target kind ``kind`` (``tau2``, ``device``) of every capability declaring one, by name."""
    table: dict[str, Callable[..., Any]] = {}
    for name, capability in capabilities().items():
        rule = capability.flaws.get(kind)
        if rule is not None:
            table[name] = _resolved(rule)
    return table


def _resolved(declared: str | Callable[..., Any]) -> Callable[..., Any]:
    """A declared probe or flaw rule, imported if it is a ``"module:function"`` reference."""
    found: Callable[..., Any] = resolve(declared) if isinstance(declared, str) else declared
    return found


def _registry_key() -> tuple[tuple[str, str], ...]:
    """The registered envs whose class can be read without importing a user's code, with their entry points
    (the registry can grow at run time): every ``trace/`` env but the targets, and any other id whose entry
    point is a class or lies in a module already imported (a user's own env, after ``--import``)."""
    key = []
    target_ids = target_env_ids()
    for env_id, spec in list(gym.registry.items()):
        entry = spec.entry_point
        if env_id in target_ids:
            continue
        if is_trace_id(env_id) or isinstance(entry, type) or _imported(entry):
            key.append((env_id, str(entry)))
    return tuple(sorted(key))


def _imported(entry: object) -> bool:
    """Whether ``entry`` is a ``"module:attribute"`` string naming an attribute of a module already imported."""
    if not isinstance(entry, str):
        return False
    module, _, attribute = entry.partition(":")
    return module in sys.modules and hasattr(sys.modules[module], attribute)


@cache
def _declarations(key: tuple[tuple[str, str], ...]) -> dict[str, list[tuple[str, Capability]]]:
    found: dict[str, list[tuple[str, Capability]]] = {}
    for env_id, _ in key:
        capability = getattr(env_class(env_id), "capability", None)  # declared by the class (None: a tau2 target)
        if isinstance(capability, Capability):
            found.setdefault(capability.name, []).append((env_id, capability))
    return dict(sorted(found.items()))


@cache
def _capabilities(key: tuple[tuple[str, str], ...]) -> dict[str, Capability]:
    chosen: dict[str, Capability] = {}
    for name, found in _declarations(key).items():
        homes = [(env_id, c) for env_id, c in found if c.probe is not None or c.flaws]
        distinct = {(str(c.probe), str(sorted(c.flaws.items())), c.description): env_id for env_id, c in homes}
        if len(distinct) > 1:
            raise ValueError(
                f"capability {name!r} is declared with different probes, flaw rules or descriptions by "
                f"{', '.join(sorted(distinct.values()))}; declare it once and let the other envs omit probe and flaw"
            )
        chosen[name] = (homes or found)[0][1]
    return chosen


__all__ = ["capabilities", "capability_envs", "flaw_rules", "get_capability", "probes"]
