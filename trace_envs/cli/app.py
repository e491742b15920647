"""The ``trace-envs`` Typer application that every command module adds its commands to.

Typer shows each parameter's Python type in the help (``<bool>``, ``<str>``, ``<list[str]>``); the
classes here show a metavar instead (the one a command gives, else the parameter's name in capitals),
nothing for flags, list commands in the pipeline's order, and accept ``-h`` for ``--help``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

PIPELINE_ORDER = (
    "list",
    "describe",
    "play",
    "tau2-replay",
    "tau2-evaluate",
    "rollout",
    "analyze",
    "synthesize",
    "validate",
    "make-model",
    "make-tiny-model",
    "train",
    "baseline",
    "route",
    "evaluate",
    "report",
    "pipeline",
    "demo",
)
"""Commands in the order a user runs them; a command not named here comes after these, as registered."""

HELP_OPTION_NAMES = ["-h", "--help"]


class _PlainArgument(TyperArgument):
    """An argument shown by its metavar alone: no ``<type>`` column, no braces in the usage line."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.metavar or (self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")


def plain_metavars(params: list[Any]) -> list[Any]:
    """Give every parameter a metavar (its own, else its name in capitals; none for flags), in place."""
    for param in params:
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None:
            param.metavar = (param.name or "value").upper()
        if type(param) is TyperArgument:
            param.__class__ = _PlainArgument  # only overrides how the help displays it
    return params


class TraceCommand(TyperCommand):
    """A command whose help shows metavars, not Python types."""

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_metavars(super().get_params(ctx))


class TraceGroup(TyperGroup):
    """The top-level group: commands listed in :data:`PIPELINE_ORDER`, help without Python types."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: index for index, name in enumerate(PIPELINE_ORDER)}
        return sorted(names, key=lambda name: (rank.get(name, len(rank)), names.index(name)))

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_metavars(super().get_params(ctx))


class TraceTyper(typer.Typer):
    """A Typer app whose commands are :class:`TraceCommand` unless a command asks for another class."""

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(name, cls=cls or TraceCommand, **kwargs)


def _version(value: bool) -> None:
    if value:
        import trace_envs

        typer.echo(f"trace-envs {trace_envs.__version__}")
        raise typer.Exit()


app = TraceTyper(
    name="trace-envs",
    cls=TraceGroup,
    help="TRACE: turn an LLM agent's recurring failures into capability-targeted training environments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": HELP_OPTION_NAMES},
)


@app.callback()
def _app_options(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_version, help="Print the version and exit.")
    ] = False,
) -> None:
    """Options of ``trace-envs`` itself (the app's help text is set above)."""
