"""The one error path of every command: a problem of the user's setup (a missing API key, an endpoint that
cannot be reached or refuses the key, a missing optional extra) is one line naming the fix, exit code 2;
other bad input is one ``error:`` line, printed as plain text (rich would read ``[llm]`` in
``pip install "trace-envs[llm]"`` as markup and drop it), the errors click finds while it parses the
arguments included (:func:`usage_errors_as_one_line`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

SETUP_EXIT_CODE = 2


def setup_problem(exc: BaseException) -> str | None:
    """One line for an error that the user fixes in their setup, not in the command's arguments; else None."""
    if hasattr(exc, "exit_code"):  # typer's (click's) usage errors and exits: already reported by the command
        return None
    from trace_envs.extras import missing_extra
    from trace_envs.llm.errors import AuthenticationFailed, EndpointUnreachable, error_chain

    for cause in error_chain(exc):
        if isinstance(cause, AuthenticationFailed | EndpointUnreachable):
            return str(cause)
    return missing_extra(exc)


def report_setup_problem(exc: BaseException, command: str) -> None:
    """Print ``trace-envs COMMAND: <the fix>`` on stderr and exit 2 when ``exc`` is a setup problem; else
    return (the caller re-raises)."""
    message = setup_problem(exc)
    if message is None:
        return
    typer.echo(f"trace-envs{' ' + command if command else ''}: {message}", err=True)
    raise typer.Exit(SETUP_EXIT_CODE)


def command_name(ctx: Any) -> str:
    """``baseline merge`` for a subcommand: the names below the program's own."""
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def print_error(message: str, label: str = "error:", *, stderr: bool = False) -> None:
    """``error: MESSAGE`` on the console (stdout, or stderr), the message as plain text on one line: the
    terminal wraps it, so a path in it is never broken by an inserted newline (and copies whole). A message
    that holds a newline or another control character (a box's exception text can hold an OSC 52 clipboard
    write, a window title, a link or a fake row) is shown as one quoted, escaped line
    (:func:`~trace_envs.safe_text.shown`)."""
    from rich.console import Console
    from rich.markup import escape

    from trace_envs.safe_text import shown

    Console(soft_wrap=True, stderr=stderr).print(f"[red]{label}[/red] {escape(shown(message))}", highlight=False)


def usage_error_line(exc: typer.TyperException) -> str:
    """What a usage error says on its one line: click's message, and where the options are listed when
    click knows the command (``see 'trace-envs rollout -h'``)."""
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    return f"{message} (see '{ctx.command_path} -h')" if ctx is not None else message


@contextmanager
def usage_errors_as_one_line() -> Iterator[None]:
    """Report a click usage error (an unknown option, a missing or bad value, raised while the arguments are
    parsed or by a command's own checks) as one ``error:`` line on stderr with its exit code, the style of
    every other bad input, instead of click's usage line, hint line and boxed panel. A bare command that
    shows its help (``no_args_is_help``) prints that help."""
    try:
        yield
    except typer.TyperException as exc:  # typer's (vendored) click exceptions all derive from it
        if shows_help(exc):  # typer prints nothing for it: show the help, as click does
            typer.echo(exc.format_message())
        else:
            print_error(usage_error_line(exc), stderr=True)
        raise typer.Exit(exc.exit_code) from None


def shows_help(exc: BaseException) -> bool:
    """Whether ``exc`` is click's "no arguments: show the help" signal, not an error (typer vendors click, so
    the class is matched by name rather than imported from a private module)."""
    return any(cls.__name__ == "NoArgsIsHelpError" for cls in type(exc).__mro__)


def renamed_option(value: Any, old_value: Any, new: str, old: str) -> Any:
    """The value of option ``new``, or of its deprecated spelling ``old`` (kept for one release, hidden), which
    prints a ``warning:`` line on stderr saying what to use; both given is bad input (exit 2)."""
    if old_value is None:
        return value
    if value is not None:
        raise fail(f"{old} and {new} are the same option: give only {new}")
    print_error(f"{old} is deprecated and will be removed in the next release: use {new}", "warning:", stderr=True)
    return old_value


def fail(message: str) -> typer.Exit:
    """One ``error:`` line on the console; raise the result (exit code 2, bad input)."""
    print_error(message)
    return typer.Exit(2)


def as_usage_error(exc: BaseException, param_hint: str) -> BaseException:
    """The error to raise for a bad option value: a setup problem as it is (the command's handler prints
    its fix), anything else as a usage error naming the option."""
    if setup_problem(exc) is not None:
        return exc
    return typer.BadParameter(str(exc), param_hint=param_hint)
