"""The ``trace-envs`` Typer application that every command module adds its commands to."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="trace-envs",
    help="TRACE: turn an LLM agent's recurring failures into capability-targeted training environments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
