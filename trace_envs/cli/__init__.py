"""The ``trace-envs`` command. Each module in ``COMMAND_MODULES`` adds its commands to ``app``."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

COMMAND_MODULES = [
    "trace_envs.cli.envs",
    "trace_envs.cli.tau2",
    "trace_envs.cli.train",
    "trace_envs.cli.analyze",
    "trace_envs.cli.rollout",
    "trace_envs.cli.synthesis",
    "trace_envs.cli.baseline",
    "trace_envs.cli.evaluate",
    "trace_envs.cli.report",
    "trace_envs.cli.pipeline",
]


def build_app() -> typer.Typer:
    """The Typer app with every command module loaded (modules import their heavy deps lazily)."""
    from .app import app
    from .warning_lines import show_warnings_as_lines

    show_warnings_as_lines()
    for module in COMMAND_MODULES:
        importlib.import_module(module)
    return app


def main() -> None:
    """Run the command line. A command's setup problems are handled by every command (:mod:`.errors`); this
    catches a missing extra of the command line itself (typer, rich), before any command can run."""
    from trace_envs.extras import missing_extra

    try:
        build_app()()
    except ModuleNotFoundError as exc:
        message = missing_extra(exc)
        if message is None:
            raise
        command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
        print(f"trace-envs{' ' + command if command else ''}: {message}", file=sys.stderr)
        sys.exit(2)
