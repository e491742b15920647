"""Env ids: every env of ours lives in the ``trace/`` namespace of Gymnasium's registry.

Here (in core) so that env packages, shipped or third-party, register through core alone.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

NAMESPACE = "trace"


def register_env(env_id: str, entry_point: Any, **kwargs: object) -> None:
    """Register ``env_id`` (``trace/<name>-v<N>``) to build ``entry_point`` (``"module:Class"`` or the
    class); registering the same id to the same entry point again does nothing, to another one is an error."""
    if not env_id.startswith(f"{NAMESPACE}/"):
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


def list_envs() -> list[str]:
    """Ids of every registered ``trace/`` env, sorted."""
    return sorted(env_id for env_id in gym.registry if env_id.startswith(f"{NAMESPACE}/"))
