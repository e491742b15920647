"""The library's own entry points: its built-in targets, domains and spot-check text scan register through the
same installed entry-point groups as a third-party package's (issue 36), so no module of the package names a
layer above it. Entry points live in the installed metadata, so a stale install fails loudly, naming the fix."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

DISTRIBUTION = "trace-envs"
"""The distribution whose entry points are the built-ins (loaded before any other package's)."""
REINSTALL = "pip install -e . --no-deps"
"""What refreshes an editable install's entry points (run in the source checkout)."""


class MissingBuiltin(RuntimeError):
    """The installed ``trace-envs`` metadata lacks the entry points of a built-in: it predates its source."""


def is_builtin(point: EntryPoint) -> bool:
    """Whether ``point`` is declared by ``trace-envs`` itself."""
    dist = getattr(point, "dist", None)
    name = getattr(dist, "name", None) or ""
    return name.replace("_", "-").lower() == DISTRIBUTION


def group_entry_points(group: str, builtins: str | None = None) -> list[EntryPoint]:
    """Every entry point of ``group`` (one read of the installed metadata): ``trace-envs``'s own first, each part in
    name order. With ``builtins`` (what trace-envs declares there, for the message), a :class:`MissingBuiltin`
    naming the reinstall when the installed metadata declares none of its own."""
    points = sorted(entry_points(group=group), key=lambda p: (not is_builtin(p), p.name, p.value))
    if builtins is not None and not any(is_builtin(p) for p in points):
        raise MissingBuiltin(
            f"trace_envs: the installed trace-envs metadata declares no {group!r} entry point, so {builtins} cannot "
            f"be registered: the install is older than its pyproject.toml. Reinstall it from the source checkout: "
            f"`{REINSTALL}`"
        )
    return points


def builtin_entry_points(group: str, builtins: str) -> list[EntryPoint]:
    """``trace-envs``'s own entry points of ``group`` (a :class:`MissingBuiltin` when it declares none)."""
    return [p for p in group_entry_points(group, builtins) if is_builtin(p)]


__all__ = ["DISTRIBUTION", "REINSTALL", "MissingBuiltin", "builtin_entry_points", "group_entry_points", "is_builtin"]
