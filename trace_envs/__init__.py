"""trace-envs: capability-targeted training environments for LLM agents (TRACE, arXiv 2604.05336).

``import trace_envs`` registers every env under ``trace/``: the target envs, every installed plugin
(``trace_envs.envs`` entry points; the shipped envs are one) and the folders of ``$TRACE_ENVS_PATH``;
then ``gymnasium.make("trace/<name>-v0", seed=3)`` builds one. ``load_envs(folder)`` adds a folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import llm_user as _llm_user  # noqa: F401 - registers the model-played user of user_model=
from . import vector as _vector  # noqa: F401 - registers UnicodeText's shared-memory layout
from .registry import env_kind, list_envs, load_envs, register_domain, register_env, register_envs

if TYPE_CHECKING:
    from .description import EnvDescription

__version__ = "0.1.0"

register_envs()


def describe(env_id: str, seed: int = 0, **knobs: Any) -> EnvDescription:
    """Capability, domain, tools, knobs and an example task of a registered env."""
    from .description import describe_env

    return describe_env(env_id, seed=seed, **knobs)


__all__ = [
    "__version__",
    "describe",
    "env_kind",
    "list_envs",
    "load_envs",
    "register_domain",
    "register_env",
    "register_envs",
]
