"""Register every shipped env under the ``trace/`` namespace and every built-in domain."""

from __future__ import annotations

import gymnasium as gym

from generated_envs import SHIPPED_DOMAINS, SHIPPED_ENVS

from .core.domain import register_domain

NAMESPACE = "trace"

BUILTIN_DOMAINS: dict[str, str] = {
    **SHIPPED_DOMAINS,
    "toy_shop": "trace_envs.domains.toy_shop:TOY_SHOP",
    "retail": "trace_envs.domains.retail:RETAIL",
    "airline": "trace_envs.domains.airline:AIRLINE",
    "device": "trace_envs.domains.device:DEVICE",
}

TARGET_ENVS: dict[str, str] = {
    "trace/tau2-retail-v0": "trace_envs.targets.tau2.env:Tau2RetailEnv",
    "trace/tau2-airline-v0": "trace_envs.targets.tau2.env:Tau2AirlineEnv",
    "trace/device-v0": "trace_envs.targets.device.env:DeviceEnv",
}
"""Target-benchmark envs (tau2-bench tasks as episodes); they need the user's benchmark data files."""


def register_envs() -> None:
    """Register shipped envs and domains; idempotent, imports no env module."""
    for name, factory in BUILTIN_DOMAINS.items():
        register_domain(name, factory)
    for env_id, entry_point in {**SHIPPED_ENVS, **TARGET_ENVS}.items():
        register_env(env_id, entry_point)


def register_env(env_id: str, entry_point: str, **kwargs: object) -> None:
    """Register one env id (``trace/<name>-v<N>``) unless it is registered already."""
    if not env_id.startswith(f"{NAMESPACE}/"):
        raise ValueError(f"env ids live in the {NAMESPACE!r} namespace: expected 'trace/<name>-v0', got {env_id!r}")
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs))


def list_envs() -> list[str]:
    """Ids of every registered ``trace/`` env, sorted."""
    return sorted(env_id for env_id in gym.registry if env_id.startswith(f"{NAMESPACE}/"))


def env_class(env_id: str) -> object:
    """The class (or factory) a registered id builds, imported but not instantiated."""
    from gymnasium.envs.registration import load_env_creator

    entry = gym.spec(env_id).entry_point
    return load_env_creator(entry) if isinstance(entry, str) else entry


def list_capability_envs() -> list[str]:
    """Registered ids whose class is a ``CapabilityEnv`` (the trainable, self-contained envs)."""
    from .core.env import CapabilityEnv

    ids = []
    for env_id in list_envs():
        cls = env_class(env_id)
        if isinstance(cls, type) and issubclass(cls, CapabilityEnv):
            ids.append(env_id)
    return ids
