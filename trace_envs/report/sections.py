"""The report's content, independent of its format: sections of paragraphs, tables and plots, which the
Markdown and the HTML renderers both write, so the two always show the same thing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Plot:
    """A PNG written beside the report, with the sentence that says how to read it."""

    path: Path
    title: str
    caption: str


@dataclass
class Table:
    """A table of text cells (Markdown inline code in backticks is allowed)."""

    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Section:
    """One part of the report; ``missing`` says what the run folder lacks for it and how to produce it."""

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    missing: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.paragraphs or self.tables or self.plots)


def pct(value: float | None) -> str:
    """``0.4567`` -> ``45.7%``; ``None`` -> ``n/a``."""
    return "n/a" if value is None else f"{100 * value:.1f}%"
