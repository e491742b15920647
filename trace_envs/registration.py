"""What ``import trace_envs`` registers: the built-in domains, every registered target's domains and envs
(:mod:`trace_envs.targets.registry`), every installed plugin (``trace_envs.envs`` entry points, the shipped
``generated_envs`` among them) and ``$TRACE_ENVS_PATH``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import gymnasium as gym

from .core.spot_checks import set_text_scan
from .plugins import load_env_path, load_envs, load_plugins
from .registry import (
    CAPABILITY_KINDS,
    NAMESPACE,
    TARGET_KINDS,
    EnvKind,
    env_kind,
    list_envs,
    register_domain,
    register_env,
    resolve,
)
from .targets.registry import registered_domains, target_env_ids, target_env_kinds

BUILTIN_DOMAINS: dict[str, str] = {"toy_shop": "trace_envs.domains.toy_shop:TOY_SHOP"}
"""Domains no target plays (the targets' own domains come with their specs)."""
LEAK_SCAN = "trace_envs.synthesis.gates.leakage:generated_leak"
"""The spot checks' scan of a boxed env's text for evaluation data (by reference: neither core nor the package
surface may import synthesis, so it is resolved at the first spot check)."""


def leak_scan(env: Any, seed: int, paced: Sequence[tuple[str, str]] = ()) -> str | None:
    """:data:`LEAK_SCAN` on ``env``'s text at ``seed`` and the replies of its paced episodes there, ``paced``
    (imported at its first use, about 0.2 s once)."""
    return cast("str | None", resolve(LEAK_SCAN)(env, seed, paced))


def register_envs() -> None:
    """Register the built-in domains, every target's domains and envs and the spot checks' leak scan, then load the
    plugins and ``$TRACE_ENVS_PATH``; idempotent, and imports no env module of ours (plugins decide what they import)."""
    for name, factory in {**BUILTIN_DOMAINS, **registered_domains()}.items():
        register_domain(name, factory)
    kinds = target_env_kinds()
    for env_id, entry_point in target_env_ids().items():
        register_env(env_id, entry_point, env_kind=kinds[env_id])
    set_text_scan(leak_scan)
    load_plugins()
    load_env_path()


def env_class(env_id: str) -> object:
    """The class (or factory) a registered id builds, imported but not instantiated."""
    from gymnasium.envs.registration import load_env_creator

    entry = gym.spec(env_id).entry_point
    return load_env_creator(entry) if isinstance(entry, str) else entry


def list_capability_envs() -> list[str]:
    """Registered ids of capability envs, run here or boxed (the trainable, self-contained envs): never a
    target env, not even the device target, whose class is a ``CapabilityEnv``."""
    return [env_id for env_id in list_envs() if env_kind(env_id) in CAPABILITY_KINDS]


__all__ = [
    "BUILTIN_DOMAINS",
    "CAPABILITY_KINDS",
    "NAMESPACE",
    "TARGET_KINDS",
    "EnvKind",
    "env_class",
    "env_kind",
    "list_capability_envs",
    "list_envs",
    "load_envs",
    "register_domain",
    "register_env",
    "register_envs",
    "target_env_ids",
]
