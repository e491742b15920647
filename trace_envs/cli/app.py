"""The ``trace-envs`` Typer application that every command module adds its commands to.

Typer shows each parameter's Python type in the help (``<bool>``, ``<str>``, ``<list[str]>``); the
classes here show a metavar instead (the one a command gives, else the parameter's name in capitals),
nothing for flags, list commands in the pipeline's order, and accept ``-h`` for ``--help``.
"""

from __future__ import annotations

import inspect
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
RICH_HELP_MIN_WIDTH = 100
"""Below this many columns a command's help is click's plain layout, which wraps instead of cutting."""


def _terminal_width() -> int:
    from rich.console import Console

    return Console().width


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


def unwrap_paragraphs(text: str | None) -> str | None:
    """Join the hard-wrapped lines of each paragraph of a docstring, so the terminal wraps them at its width
    (Typer keeps single line breaks after the first paragraph, which breaks lines mid-sentence)."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in paragraph.splitlines()) for paragraph in paragraphs)


class TraceCommand(TyperCommand):
    """A command whose help shows metavars, not Python types, and wraps its paragraphs at the terminal's width;
    its setup problems (a missing API key or extra, an endpoint that cannot be reached) are one line naming the
    fix, exit code 2 (:mod:`.errors`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = unwrap_paragraphs(self.help)

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_metavars(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if (ctx.terminal_width or _terminal_width()) >= RICH_HELP_MIN_WIDTH:
            return super().format_help(ctx, formatter)
        # Rich's option panel cuts long option names and specs with an ellipsis when narrow: use click's layout.
        markup_mode, self.rich_markup_mode = self.rich_markup_mode, None
        try:
            return super().format_help(ctx, formatter)
        finally:
            self.rich_markup_mode = markup_mode

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            from .errors import command_name, report_setup_problem

            report_setup_problem(exc, command_name(ctx))
            raise


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


WEAKER_BOX_HELP = (
    "Run boxes (validation, loaded env folders, rollouts...) even where this host lacks one of their kernel "
    "layers (a namespace, the seccomp filter, Landlock); the report names the layers in force. Without it, "
    "such a host refuses, naming the missing layer."
)


def weaker_box_option(value: bool) -> bool:
    """``--weaker-box``: allow weaker boxes in this process and the workers it starts."""
    if value:
        from trace_envs.plugins import allow_weaker_box

        allow_weaker_box()
    return value


WeakerBoxOption = Annotated[bool, typer.Option("--weaker-box", callback=weaker_box_option, help=WEAKER_BOX_HELP)]


@app.callback()
def _app_options(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_version, help="Print the version and exit.")
    ] = False,
    weaker_box: WeakerBoxOption = False,
) -> None:
    """Options of ``trace-envs`` itself (the app's help text is set above)."""
