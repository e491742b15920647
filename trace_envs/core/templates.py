"""Jinja2 templates shipped in the wheel (``trace_envs/templates``) or beside a source checkout."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2


@cache
def templates_dir() -> Path:
    """Where the templates are: inside the installed package, else the repository's ``templates/``."""
    packaged = resources.files("trace_envs").joinpath("templates")
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        "trace-envs templates not found: reinstall the package (`pip install trace-envs`) so that "
        "trace_envs/templates is present"
    )


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render_template(name: str, **context: Any) -> str:
    """Render ``templates/<name>`` with strict undefined variables (a missing one is an error)."""
    return _environment().get_template(name).render(**context)
