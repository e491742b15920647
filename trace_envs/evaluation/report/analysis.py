"""The capability analysis section (the paper's Figure 2): how often each capability was selected across
labelling runs and what share of failures it covers, with the plots of :mod:`trace_envs.analysis.report`."""

from __future__ import annotations

from pathlib import Path

from trace_envs.analysis.report import keep_rule, ordered, write_plots

from .inputs import ReportInputs
from .sections import Plot, Section, Table, pct

CAPTIONS = {
    "selection_frequency": (
        "Capability selection frequency",
        "How many of the labelling runs selected each capability (green: kept). A capability selected in most "
        "runs is a stable deficit, not an artefact of one run's labels.",
    ),
    "coverage": (
        "Failure coverage per capability",
        "Median share of failed trajectories labelled as lacking the capability, with the interquartile range "
        "across runs as error bars. A few capabilities covering most failures is what makes targeted envs pay off.",
    ),
}


def analysis_section(inputs: ReportInputs, out: Path) -> Section:
    """The section (``missing`` when the run folder has no ``analysis.json``)."""
    section = Section("analysis", "Capability selection and coverage")
    result = inputs.analysis
    if result is None:
        section.missing = "no analysis.json: run `trace-envs analyze STORE`"
        return section
    where = f" (`{inputs.relative(inputs.analysis_path)}`)" if inputs.analysis_path else ""
    kept = ", ".join(f"`{name}`" for name in result.kept) or "none"
    section.paragraphs += [
        f"{result.episodes} episodes ({result.successes} successes, {result.failures} failures) analysed by "
        f"`{result.config.analyst}` in {result.config.runs} labelling run(s){where}. Kept: {kept}.",
        f"Keep rule: {keep_rule(result.config)}.",
    ]
    table = Table(["capability", "selected", "coverage median [IQR]", "gap median", "kept"], [])
    for s in ordered(result):
        gap = "undefined" if s.gap_median is None else f"{s.gap_median:+.2f}"
        coverage = f"{pct(s.coverage_median)} [{pct(s.coverage_q1)}, {pct(s.coverage_q3)}]"
        table.rows.append([f"`{s.capability}`", f"{s.selected}/{s.runs}", coverage, gap, "yes" if s.kept else "no"])
    section.tables.append(table)
    for path in write_plots(result, out):
        title, caption = CAPTIONS.get(path.stem, (path.stem, ""))
        section.plots.append(Plot(path, title, caption))
    return section
