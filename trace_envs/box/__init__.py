"""Boxed envs: an env whose code is not trusted runs in a box process; this process holds a proxy.

- :mod:`~trace_envs.box.protocol`: the typed, versioned JSON-lines protocol between the two;
- :mod:`~trace_envs.box.launch`, :mod:`~trace_envs.box.mounts`, :mod:`~trace_envs.box.audit`,
  :mod:`~trace_envs.box.limits`: the kernel layers a box starts with;
- :mod:`~trace_envs.box.server`: what runs in the box; :mod:`~trace_envs.box.client`: one box seen from here;
- :mod:`~trace_envs.box.proxy`: :class:`BoxedEnv`, a proxy env (the env contract, ``VerifiableEnv``) whose episodes run in the box;
- :mod:`~trace_envs.box.pool`: boxes reused across episodes; :mod:`~trace_envs.box.registry`: a module's boxed class.

The box sits below the registry and imports nothing of it: registering a boxed class under an id (``load_envs``,
``box_installed_env``) is :mod:`trace_envs.registry`'s.
"""

from __future__ import annotations

from .client import BoxCrashed, BoxedEnvError, BoxFailure, BoxLayerMissing, BoxProcess, BoxProtocolError, BoxTimeout
from .limits import BoxLimits
from .pool import BoxPool, allow_weaker_box, default_pool
from .protocol import PROTOCOL_VERSION
from .proxy import BoxedEnv, boxed_env_class
from .registry import boxed_class


def __getattr__(name: str) -> object:
    """``box_installed_env``, deprecated here for one release: it registers an id, so it moved up to
    :mod:`trace_envs.registry` (looked up in the registry ``import trace_envs`` already loaded, never imported)."""
    if name != "box_installed_env":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys
    import warnings

    warnings.warn(
        "trace_envs.box.box_installed_env is deprecated and will be removed in the next release: use "
        "trace_envs.registry.box_installed_env",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(sys.modules["trace_envs.registry.sources"], name)


__all__ = [
    "PROTOCOL_VERSION",
    "BoxCrashed",
    "BoxFailure",
    "BoxLayerMissing",
    "BoxLimits",
    "BoxPool",
    "BoxProcess",
    "BoxProtocolError",
    "BoxTimeout",
    "BoxedEnv",
    "BoxedEnvError",
    "allow_weaker_box",
    "boxed_class",
    "boxed_env_class",
    "default_pool",
]
