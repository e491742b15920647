"""``write_report``: read a run folder (or inputs already loaded), draw the plots and write ``report.md``
and the self-contained ``report.html`` into one output folder."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import analysis_sections
from .baselines import methods_section
from .figures import pyplot
from .html import render_html
from .inputs import ReportInputs, collect_inputs
from .markdown import render_markdown
from .routing import routing_section
from .scaling import scaling_section
from .scores import evaluation_section
from .sections import Section
from .synthesis import synthesis_section
from .training import training_section

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"


@dataclass
class ReportFiles:
    """What :func:`write_report` wrote, and which sections had nothing to show."""

    markdown: Path
    html: Path
    plots: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def slugs(inputs: ReportInputs) -> list[str]:
    """A file-name stem per evaluation: its target's name, numbered when two evaluations share one."""
    names = [e.results.target.name for e in inputs.evaluations]
    return [n if names.count(n) == 1 else f"{n}-{names[:i].count(n) + 1}" for i, n in enumerate(names)]


def build_sections(inputs: ReportInputs, out: Path) -> list[Section]:
    """Every section in reading order, drawing the plots: the results first (an evaluation per target, with
    its routing; rollouts spent; methods), then how they were reached in pipeline order (an analysis per
    target, the gate table of every target, the training curves, routes no evaluation shows). Per-target
    sections follow the run's target order (``inputs.targets``), then target names."""
    names = slugs(inputs)
    sections = [evaluation_section(e, inputs, out, s) for e, s in zip(inputs.evaluations, names, strict=True)]
    if not inputs.evaluations:
        sections.append(
            Section("evaluation", "Evaluation", missing="no evaluation results.json: run `trace-envs evaluate`")
        )
    sections += [
        scaling_section(inputs, out, names),
        methods_section(inputs),
        *analysis_sections(inputs, out),
        synthesis_section(inputs),
        training_section(inputs, out),
        routing_section(inputs),
    ]
    return sections


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def write_report(
    run_dir_or_inputs: str | Path | ReportInputs,
    out_dir: str | Path,
    *,
    title: str = "TRACE run report",
    notes: list[str] | None = None,
    targets: list[str] | None = None,
) -> ReportFiles:
    """Write ``report.md``, ``report.html`` and the plots (PNG) into ``out_dir``.

    Args:
        run_dir_or_inputs: A run folder (every output under it is found by file name) or :class:`ReportInputs`.
        out_dir: Where the report goes (created when missing; may lie inside the run folder).
        title: The report's heading.
        notes: Paragraphs shown first, e.g. which parts of the run were simulated.
        targets: The order of the per-target sections (the pipeline passes its config's); others follow by name.

    Raises:
        ReportInputError: a file of the run folder is malformed (the message names it and the fix).
        ModuleNotFoundError: matplotlib is not installed (the ``analysis`` extra).
    """
    pyplot()  # without matplotlib, fail before reading or writing anything
    inputs = (
        run_dir_or_inputs if isinstance(run_dir_or_inputs, ReportInputs) else collect_inputs(run_dir_or_inputs, targets)
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sections = build_sections(inputs, out)
    intro = [f"Run folder: `{inputs.root}`." if inputs.root is not None else "Inputs given directly.", *(notes or [])]
    markdown, html = out / MARKDOWN_FILE, out / HTML_FILE
    _write(markdown, render_markdown(title, intro, sections))
    _write(html, render_html(title, intro, sections))
    plots = [plot.path for section in sections for plot in section.plots]
    return ReportFiles(markdown, html, plots, [f"{s.title}: {s.missing}" for s in sections if s.missing])
