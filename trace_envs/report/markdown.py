"""``report.md``: the sections as Markdown, with the plots as images beside it."""

from __future__ import annotations

from trace_envs.safe_text import shown

from .sections import Section, Table


def _cell(text: str) -> str:
    """A cell on one line: pipes escaped, and text with control characters (a module's rejection reason, say)
    shown quoted and escaped (:func:`~trace_envs.safe_text.shown`), never acting on a terminal that shows the file."""
    return shown(text).replace("|", "\\|")


def table_markdown(table: Table) -> list[str]:
    """A Markdown table (pipes inside cells escaped), its caption above it."""
    lines = [table.caption, ""] if table.caption else []
    lines += ["| " + " | ".join(_cell(h) for h in table.header) + " |", "|" + " --- |" * len(table.header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    return [*lines, ""]


def render_markdown(title: str, intro: list[str], sections: list[Section]) -> str:
    """The whole report: title, intro paragraphs, what is missing, then every section that has content."""
    lines = [f"# {title}", ""]
    for paragraph in intro:
        lines += [paragraph, ""]
    missing = [s for s in sections if s.missing]
    if missing:
        lines += ["**Not in this run folder:**", ""]
        lines += [f"- {s.title}: {s.missing}." for s in missing] + [""]
    for section in sections:
        if section.empty:
            continue
        lines += [f"## {section.title}", ""]
        for paragraph in section.paragraphs:
            lines += [paragraph, ""]
        for plot in section.plots:
            lines += [f"![{plot.title}]({plot.path.name})", "", f"*{plot.title}.* {plot.caption}", ""]
        for table in section.tables:
            lines += table_markdown(table)
    return "\n".join(lines).rstrip() + "\n"
