"""Warnings the user acts on, shown as one ``warning: …`` line on stderr: a damaged line of a store that was
skipped or cut off (:class:`~trace_envs.rollout.store.StoreWarning`), a deprecated key of a pipeline config
(:class:`~trace_envs.pipeline.config.ConfigWarning`), a renamed config key or argument
(:class:`~trace_envs.problems.RenamedWarning`). Python's default display adds the
category, the source file and the line of code that warned, which says nothing to someone running a command."""

from __future__ import annotations

import sys
import warnings
from typing import TextIO

from trace_envs.problems import RenamedWarning

_MARK = "_trace_envs_warning_lines"


def user_warning_line(message: Warning | str, category: type[Warning]) -> str | None:
    """``warning: MESSAGE`` for a warning meant for the user (a store's, a pipeline config's deprecated key, a
    renamed name's), else None (shown as Python does)."""
    from trace_envs.pipeline.config import ConfigWarning
    from trace_envs.rollout.store import StoreWarning

    if not issubclass(category, StoreWarning | ConfigWarning | RenamedWarning):
        return None
    return f"warning: {' '.join(str(message).split())}"


def show_warnings_as_lines() -> None:
    """Route user warnings through :func:`user_warning_line`, every other warning to the display before it.
    Idempotent (the app is built once per process, but tests build it many times). Python's filters still
    decide what is shown, so the same skipped line is reported once per command, however often it is read."""
    previous = warnings.showwarning
    if getattr(previous, _MARK, False):
        return

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        text = user_warning_line(message, category)
        if text is None:
            previous(message, category, filename, lineno, file, line)
            return
        print(text, file=file or sys.stderr)

    setattr(show, _MARK, True)
    warnings.showwarning = show
    warnings.filterwarnings("default", category=RenamedWarning)  # a config's old key is the user's to fix
