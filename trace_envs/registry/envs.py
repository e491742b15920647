"""What is registered by name: env ids (the ``trace/`` namespace of Gymnasium's registry) with their kinds,
domains, and the ``"package.module:attribute"`` references behind them.

Each of these imports a module named by a string, so it lives here in the registry, never in the env contract
(:mod:`trace_envs.core`), which an env module imports from. Env packages register through
``trace_envs.register_env`` / ``trace_envs.register_domain``.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any, Literal, get_args

import gymnasium as gym

from ..core.domain import Domain, set_domain_lookup
from .ids import NAMESPACE, is_trace_id

EnvKind = Literal["capability", "boxed", "device_target", "tau2_target"]
"""What kind of env an id builds, recorded when it is registered: a capability env run here (``capability``),
one played in a box (``boxed``), a target env that is also a capability env with built-in tasks and a scripted
user (``device_target``), or a target env playing a data folder's tasks with a model-played user
(``tau2_target``). Every kind satisfies :class:`trace_envs.core.EnvProtocol`."""
ENV_KINDS: tuple[EnvKind, ...] = get_args(EnvKind)
CAPABILITY_KINDS: tuple[EnvKind, ...] = ("capability", "boxed")
"""The kinds that are capability envs (self-contained and trainable)."""
TARGET_KINDS: tuple[EnvKind, ...] = ("device_target", "tau2_target")
"""The kinds that play a target benchmark's tasks."""
_KINDS: dict[str, EnvKind] = {}


@cache
def resolve(reference: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names (imported on first use)."""
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"expected a reference like 'package.module:function', got {reference!r}")
    return getattr(importlib.import_module(module_name), attribute)


def register_env(env_id: str, entry_point: Any, *, env_kind: EnvKind = "capability", **kwargs: object) -> None:
    """Register ``env_id`` (``trace/<name>-v<N>``) to build ``entry_point`` (``"module:Class"`` or the
    class) as an env of ``env_kind``; registering the same id to the same entry point again does nothing, to
    another one is an error."""
    if env_kind not in ENV_KINDS:
        raise ValueError(f"unknown env kind {env_kind!r} for {env_id!r}; expected one of {', '.join(ENV_KINDS)}")
    if not is_trace_id(env_id):
        raise ValueError(f"env ids live in the {NAMESPACE!r} namespace: expected 'trace/<name>-v0', got {env_id!r}")
    if env_id in gym.registry:
        registered = gym.registry[env_id].entry_point
        if registered != entry_point:
            raise ValueError(
                f"env id {env_id!r} is already registered to {registered!r}, so it cannot also be {entry_point!r}: "
                "give one of them another name"
            )
        return
    gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs))
    _KINDS[env_id] = env_kind


def env_kind(env_id: str) -> EnvKind | None:
    """The kind ``env_id`` was registered as, so consumers ask the registry instead of the class tree; ``None``
    for an id registered with ``gym.register`` directly (no kind was recorded: any Gymnasium env)."""
    gym.spec(env_id)  # an unknown id: Gymnasium's own error
    return _KINDS.get(env_id)


def list_envs() -> list[str]:
    """Ids of every registered ``trace/`` env, sorted."""
    return sorted(env_id for env_id in gym.registry if is_trace_id(env_id))


def list_capability_envs() -> list[str]:
    """Registered ids of capability envs, run here or boxed (the trainable, self-contained envs): never a
    target env, not even the device target, whose class is a ``CapabilityEnv``."""
    return [env_id for env_id in list_envs() if env_kind(env_id) in CAPABILITY_KINDS]


def env_class(env_id: str) -> object:
    """The class (or factory) a registered id builds, imported but not instantiated."""
    from gymnasium.envs.registration import load_env_creator

    entry = gym.spec(env_id).entry_point
    return load_env_creator(entry) if isinstance(entry, str) else entry


_DOMAIN_FACTORIES: dict[str, str] = {}
_DOMAINS: dict[str, Domain[Any]] = {}


def register_domain(name: str, factory: str) -> None:
    """Register ``"package.module:attribute"`` (a Domain or a zero-argument callable returning one)."""
    _DOMAIN_FACTORIES[name] = factory
    _DOMAINS.pop(name, None)


def get_domain(name: str) -> Domain[Any]:
    """The registered domain called ``name``, imported on first use."""
    if name not in _DOMAINS:
        if name not in _DOMAIN_FACTORIES:
            raise KeyError(f"unknown domain {name!r}; registered domains: {sorted(_DOMAIN_FACTORIES)}")
        target = resolve(_DOMAIN_FACTORIES[name])
        domain = target if isinstance(target, Domain) else target()
        if domain.name != name:
            raise ValueError(f"domain registered as {name!r} calls itself {domain.name!r}")
        _DOMAINS[name] = domain
    return _DOMAINS[name]


def registered_domains() -> list[str]:
    """Names of every registered domain, sorted."""
    return sorted(_DOMAIN_FACTORIES)


set_domain_lookup(get_domain)  # a boxed env's proxy finds its domain through core, so the box stays below here

__all__ = [
    "CAPABILITY_KINDS",
    "ENV_KINDS",
    "NAMESPACE",
    "TARGET_KINDS",
    "EnvKind",
    "env_class",
    "env_kind",
    "get_domain",
    "list_capability_envs",
    "list_envs",
    "register_domain",
    "register_env",
    "registered_domains",
    "resolve",
]
