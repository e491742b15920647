"""Boxed envs: an env whose code is not trusted runs in a box process; this process holds a proxy.

- :mod:`~trace_envs.box.protocol`: the typed, versioned JSON-lines protocol between the two;
- :mod:`~trace_envs.box.launch`, :mod:`~trace_envs.box.mounts`, :mod:`~trace_envs.box.audit`,
  :mod:`~trace_envs.box.limits`: the kernel layers a box starts with;
- :mod:`~trace_envs.box.server`: what runs in the box; :mod:`~trace_envs.box.client`: one box seen from here;
- :mod:`~trace_envs.box.proxy`: :class:`BoxedEnv`, a proxy env (the env contract, ``VerifiableEnv``) whose episodes run in the box;
- :mod:`~trace_envs.box.pool`: boxes reused across episodes; :mod:`~trace_envs.box.registry`: boxed ids.
"""

from __future__ import annotations

from .client import BoxCrashed, BoxedEnvError, BoxFailure, BoxLayerMissing, BoxProcess, BoxProtocolError, BoxTimeout
from .limits import BoxLimits
from .pool import BoxPool, allow_weaker_box, default_pool
from .protocol import PROTOCOL_VERSION
from .proxy import BoxedEnv, boxed_env_class
from .registry import box_installed_env, boxed_class

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
    "box_installed_env",
    "boxed_class",
    "boxed_env_class",
    "default_pool",
]
