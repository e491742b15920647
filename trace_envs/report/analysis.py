"""The capability analysis sections (the paper's Figure 2), one per ``analysis.json`` of the run (a run of
several targets analyses each): how often each capability was selected across labelling runs and what
share of failures it covers, with the plots of :mod:`trace_envs.analysis.plots`."""

from __future__ import annotations

from pathlib import Path

from trace_envs.analysis.plots import ordered, write_plots
from trace_envs.analysis.report import keep_rule

from .inputs import Analysis, ReportInputs
from .sections import Plot, Section, Table, pct

TITLE = "Capability selection and coverage"


def _captions(target: str, runs: int) -> dict[str, tuple[str, str]]:
    return {
        "selection_frequency": (
            f"Capability selection frequency ({target})",
            f"How many of the {runs} labelling run(s) on {target} selected each capability (green: kept, grey: "
            "not kept; the label gives selected/runs, a tick at 0 marks a capability no run selected). A "
            "capability selected in most runs is a stable deficit, not an artefact of one run's labels.",
        ),
        "coverage": (
            f"Failure coverage per capability ({target})",
            f"Median share of {target}'s failed trajectories labelled as lacking each capability, with the "
            "interquartile range across runs as error bars (the label gives the median). A few capabilities "
            "covering most failures is what makes targeted envs pay off.",
        ),
    }


def analysis_sections(inputs: ReportInputs, out: Path) -> list[Section]:
    """A section per analysis in target order (one ``missing`` section when the run folder has none)."""
    if not inputs.analyses:
        section = Section("analysis", TITLE, missing="no analysis.json: run `trace-envs analyze STORE`")
        return [section]
    several = len(inputs.analyses) > 1
    suffixes = _suffixes([a.target for a in inputs.analyses]) if several else [""]
    return [_section(a, inputs, out, suffix, several) for a, suffix in zip(inputs.analyses, suffixes, strict=True)]


def _suffixes(targets: list[str]) -> list[str]:
    """A plot-file suffix per analysis: ``_<target>``, numbered when two analyses share a folder name."""
    return [f"_{t}" if targets.count(t) == 1 else f"_{t}-{targets[:i].count(t) + 1}" for i, t in enumerate(targets)]


def _section(analysis: Analysis, inputs: ReportInputs, out: Path, suffix: str, several: bool) -> Section:
    result, target = analysis.result, analysis.target
    title = f"{TITLE}: {target}" if several else TITLE
    section = Section(f"analysis{suffix}", title)
    kept = ", ".join(f"`{name}`" for name in result.kept) or "none"
    rate = pct(result.successes / result.episodes) if result.episodes else "n/a"
    section.paragraphs += [
        f"{result.episodes} rollout episodes of `{result.store}` ({result.successes} successes: {rate}; "
        f"{result.failures} failures) analysed by `{result.config.analyst}` in {result.config.runs} labelling "
        f"run(s) (`{inputs.relative(analysis.path)}`). Kept: {kept}.",
        f"Keep rule: {keep_rule(result.config)}.",
    ]
    table = Table(["capability", "selected", "coverage median [IQR]", "gap median", "kept"], [])
    for s in ordered(result):
        gap = "undefined" if s.gap_median is None else f"{s.gap_median:+.2f}"
        coverage = f"{pct(s.coverage_median)} [{pct(s.coverage_q1)}, {pct(s.coverage_q3)}]"
        table.rows.append([f"`{s.capability}`", f"{s.selected}/{s.runs}", coverage, gap, "yes" if s.kept else "no"])
    section.tables.append(table)
    captions = _captions(target, result.config.runs)
    for path in write_plots(result, out, suffix):
        title, caption = captions[path.stem.removesuffix(suffix)]
        section.plots.append(Plot(path, title, caption))
    return section
