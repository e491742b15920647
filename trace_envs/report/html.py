"""``report.html``: one self-contained page (plots inline as base64 PNG, styles inline, no script and no
external asset), rendered from ``templates/report/report.html.j2`` with autoescaping."""

from __future__ import annotations

import base64
import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

    from .sections import Section

TEMPLATE = "report/report.html.j2"
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline(text: str) -> str:
    """Escape ``text`` for HTML, then turn Markdown inline code and bold into ``<code>`` and ``<strong>``."""
    from markupsafe import Markup, escape

    html = _BOLD.sub(r"<strong>\1</strong>", _CODE.sub(r"<code>\1</code>", str(escape(text))))
    return Markup(html)  # safe: built from escaped text


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,…`` for an image embedded in the page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    from trace_envs.core.templates import templates_dir

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
    )
    environment.filters["inline"] = inline
    return environment


def render_html(title: str, intro: list[str], sections: list[Section]) -> str:
    """The page; each plot's PNG is read from disk and embedded."""
    images = {id(plot): data_uri(plot.path.read_bytes()) for section in sections for plot in section.plots}
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            title=title,
            intro=intro,
            sections=[s for s in sections if not s.empty],
            missing=[s for s in sections if s.missing],
            image=lambda plot: images[id(plot)],
            statuses={"passed": "ok", "FAILED": "bad", "skipped": "skip"},
        )
    )
