"""Jinja2 templates shipped in the wheel (``trace_envs/templates``) or beside a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path as _Path
from typing import Any

import jinja2 as _jinja2


@cache
def templates_dir() -> _Path:
    """Where the templates are: inside the installed package, else the repository's ``templates/``."""
    for found in (
        _Path(__file__).resolve().parents[1] / "templates",
        _Path(__file__).resolve().parents[2] / "templates",
    ):
        if found.is_dir():
            return found
    raise FileNotFoundError(
        "trace-envs templates not found: reinstall the package (`pip install trace-envs`) so that "
        "trace_envs/templates is present"
    )


@cache
def _environment() -> _jinja2.Environment:
    return _jinja2.Environment(
        loader=_jinja2.FileSystemLoader(str(templates_dir())),
        undefined=_jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render_template(name: str, **context: Any) -> str:
    """Render ``templates/<name>`` with strict undefined variables (a missing one is an error)."""
    return _environment().get_template(name).render(**context)
