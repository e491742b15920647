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
]


def build_app() -> typer.Typer:
    """The Typer app with every command module loaded (modules import their heavy deps lazily)."""
    from .app import app

    for module in COMMAND_MODULES:
        importlib.import_module(module)
    return app


def main() -> None:
    try:
        app = build_app()
    except ModuleNotFoundError as exc:
        if exc.name in ("typer", "rich"):
            sys.exit(f"trace-envs: the command line needs the 'cli' extra: pip install 'trace-envs[cli]' ({exc})")
        raise
    app()
