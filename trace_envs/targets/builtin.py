"""The shipped targets: tau2-bench airline and retail (the user's task files, an LLM-played customer) and the
ToolSandbox-style device scenarios (built in, scripted users). The only list of targets in the library: trace-envs
registers it through its own ``trace_envs.targets`` entry point ``builtin`` (pyproject.toml), as a plugin would,
and every other module reads :mod:`trace_envs.registry.targets`."""

from __future__ import annotations

BUILTIN_TARGETS = (
    "trace_envs.targets.tau2.target:AIRLINE",
    "trace_envs.targets.tau2.target:RETAIL",
    "trace_envs.targets.device.target:DEVICE",
)
"""One lazy reference per target, in listing order (``tau2`` plays airline's tasks, then retail's)."""


def builtin_targets() -> tuple[str, ...]:
    """The shipped targets' references (what the entry point ``builtin`` of ``trace_envs.targets`` returns: the
    registry imports each one)."""
    return BUILTIN_TARGETS
