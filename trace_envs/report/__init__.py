"""The report of a TRACE run: Markdown with PNG plots beside it, and one self-contained HTML page.

It shows whatever the run folder holds (evaluation results, baseline records, analysis, synthesis
manifest, adapters) and says what is missing. Plots need matplotlib (the ``analysis`` extra).
"""

from __future__ import annotations

from .inputs import Adapter, Baseline, ReportInputError, ReportInputs, Results, collect_inputs
from .writer import HTML_FILE, MARKDOWN_FILE, ReportFiles, write_report

__all__ = [
    "HTML_FILE",
    "MARKDOWN_FILE",
    "Adapter",
    "Baseline",
    "ReportFiles",
    "ReportInputError",
    "ReportInputs",
    "Results",
    "collect_inputs",
    "write_report",
]
