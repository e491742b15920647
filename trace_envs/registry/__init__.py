"""The registry, in one home (modelled on Gymnasium's ``registration.py``): where envs and their ids come from.

- :mod:`~trace_envs.registry.ids`: the only place env ids are formed or read apart (``trace/<name>-v<N>``);
- :mod:`~trace_envs.registry.envs`: registering and listing envs and domains, an id's class and kind;
- :mod:`~trace_envs.registry.sources`: where envs come from (the targets, ``trace_envs.envs`` entry points,
  :func:`load_envs`, ``$TRACE_ENVS_PATH``, boxed twins);
- :mod:`~trace_envs.registry.manifest`: the one model of a synthesis folder's ``manifest.json``;
- :mod:`~trace_envs.registry.capabilities`: the capabilities registered envs declare;
- :mod:`~trace_envs.registry.targets`: the registered target benchmarks;
- :mod:`~trace_envs.registry.builtins`: the library's own entry points (its built-in targets, domains and
  spot-check text scan register through them, as a plugin's do).

It sits above core and the box and imports nothing else of ours but the model clients' ``Usage`` record, so no
layer below it reaches up (``tests/test_layering.py``). Env packages register through ``trace_envs.register_env``.
"""

from __future__ import annotations

from .envs import (
    CAPABILITY_KINDS,
    ENV_KINDS,
    TARGET_KINDS,
    EnvKind,
    env_class,
    env_kind,
    get_domain,
    list_capability_envs,
    list_envs,
    register_domain,
    register_env,
    registered_domains,
    resolve,
)
from .ids import NAMESPACE
from .sources import (
    box_installed_env,
    builtin_domains,
    load_env_path,
    load_envs,
    load_plugins,
    loaded_folders,
    register_envs,
)
from .targets import target_env_ids

__all__ = [
    "CAPABILITY_KINDS",
    "ENV_KINDS",
    "NAMESPACE",
    "TARGET_KINDS",
    "EnvKind",
    "box_installed_env",
    "builtin_domains",
    "env_class",
    "env_kind",
    "get_domain",
    "list_capability_envs",
    "list_envs",
    "load_env_path",
    "load_envs",
    "load_plugins",
    "loaded_folders",
    "register_domain",
    "register_env",
    "register_envs",
    "registered_domains",
    "resolve",
    "target_env_ids",
]


def __getattr__(name: str) -> object:
    """The deprecated ``BUILTIN_DOMAINS`` (kept for one release): :func:`builtin_domains`."""
    if name == "BUILTIN_DOMAINS":
        from . import sources

        return sources.__getattr__(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
