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
    "tau2-generate",
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
SHORT_HELP_LIMIT = 400
"""Characters of a command's first sentence that a group's plain help lists (all of it, in practice)."""


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
        repeats = self.nargs != 1 and not name.rstrip("]").endswith("...")  # a metavar may say it already
        return name + ("..." if repeats else "")


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


def unescape_markup(text: str | None) -> str | None:
    """Help text as click's plain layout shows it: rich's ``\\[`` escape (which keeps ``[@<adapter>]`` or
    ``[default: …]`` from being read as markup) becomes a plain ``[``."""
    return text.replace("\\[", "[") if text else text


def format_help_for_width(command: Any, ctx: Any, formatter: Any, format_help: Any) -> None:
    """Format ``command``'s help with rich's panels at :data:`RICH_HELP_MIN_WIDTH` columns or more, else (a
    narrow terminal, any non-tty) with click's plain layout, which wraps where rich's option panel would cut
    long option names with an ellipsis; the plain layout shows rich's escaped brackets as plain ones. The
    top-level group and every command take this one rule, so their help looks alike at any width."""
    if (ctx.terminal_width or _terminal_width()) >= RICH_HELP_MIN_WIDTH:
        return format_help(ctx, formatter)
    params = command.get_params(ctx)
    saved = command.rich_markup_mode, command.help, [param.help for param in params if hasattr(param, "help")]
    command.rich_markup_mode, command.help = None, unescape_markup(command.help)
    for param in params:
        if hasattr(param, "help"):
            param.help = unescape_markup(param.help)
    try:
        return format_help(ctx, formatter)
    finally:
        command.rich_markup_mode, command.help, helps = saved
        for param, text in zip([param for param in params if hasattr(param, "help")], helps, strict=True):
            param.help = text


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
        format_help_for_width(self, ctx, formatter, super().format_help)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            from .errors import command_name, report_setup_problem

            report_setup_problem(exc, command_name(ctx))
            raise


class TraceGroup(TyperGroup):
    """The top-level group: commands listed in :data:`PIPELINE_ORDER`, help without Python types, and a
    usage error anywhere below it (parsing or a command's own check) one ``error:`` line (:mod:`.errors`)."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        from .errors import usage_errors_as_one_line

        with usage_errors_as_one_line():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        from .errors import usage_errors_as_one_line

        with usage_errors_as_one_line():
            return super().invoke(ctx)

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: index for index, name in enumerate(PIPELINE_ORDER)}
        return sorted(names, key=lambda name: (rank.get(name, len(rank)), names.index(name)))

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_metavars(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        format_help_for_width(self, ctx, formatter, super().format_help)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The plain layout's command list: each command's first sentence whole, wrapped (as rich's panel
        shows it), where click would cut it to the terminal's width with ``...``."""
        rows = [
            (name, command.get_short_help_str(limit=SHORT_HELP_LIMIT))
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


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
        from trace_envs.registry.sources import allow_weaker_box

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
