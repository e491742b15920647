"""What ``import trace_envs`` registers: the built-in domains and target envs, every installed plugin
(``trace_envs.envs`` entry points, the shipped ``generated_envs`` among them) and ``$TRACE_ENVS_PATH``."""

from __future__ import annotations

import gymnasium as gym

from .core.domain import register_domain
from .core.registry import NAMESPACE, list_envs, register_env
from .plugins import load_env_path, load_envs, load_plugins

BUILTIN_DOMAINS: dict[str, str] = {
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
    """Register the built-in domains and target envs, then load the plugins and ``$TRACE_ENVS_PATH``;
    idempotent, and imports no env module of ours (plugins decide what they import)."""
    for name, factory in BUILTIN_DOMAINS.items():
        register_domain(name, factory)
    for env_id, entry_point in TARGET_ENVS.items():
        register_env(env_id, entry_point)
    load_plugins()
    load_env_path()


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


__all__ = [
    "BUILTIN_DOMAINS",
    "NAMESPACE",
    "TARGET_ENVS",
    "env_class",
    "list_capability_envs",
    "list_envs",
    "load_envs",
    "register_env",
    "register_envs",
]
