"""The human-readable report: ``report.md`` with the kept capabilities, a table per capability
(selection frequency, coverage median and IQR, gap, ER+/ER- of the first run), agreement with the
probes, the cost, and two plots like the paper's Figure 2 (selection frequency; median coverage with
IQR error bars). Plots need matplotlib (the ``analysis`` extra); without it the report says so."""

from __future__ import annotations

from pathlib import Path

from .models import AnalysisConfig, AnalysisResult
from .plots import ordered, write_plots


def _pct(value: float | None) -> str:
    return "undefined" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None) -> str:
    return "undefined" if value is None else f"{value:+.2f}"


def keep_rule(config: AnalysisConfig) -> str:
    """The rule the statistics apply, in words, including the undefined-gap case that ``gap >= delta``
    alone does not cover."""
    gap = f"coverage >= {config.rho:g} and gap = ER- - ER+ >= {config.delta:g}"
    if config.require_contrast:
        selected = f"{gap} (never when no successful trajectory needed the capability: ER+ and the gap undefined)"
    else:
        selected = (
            f"{gap}, or, when no successful trajectory needed the capability (ER+ and the gap undefined), "
            f"ER- >= {config.delta:g}"
        )
    runs = "run" if config.runs == 1 else f"{config.runs} runs"
    return f"selected in a run when {selected}; kept when selected in at least {100 * config.min_selection:.0f}% of the {runs}"


def render_markdown(result: AnalysisResult, plots: list[Path]) -> str:
    """The report text."""
    config = result.config
    lines = [
        "# Capability analysis",
        "",
        f"Store `{result.store}`: {result.episodes} episodes, {result.successes} successes, "
        f"{result.failures} failures. Analyst `{config.analyst}`, {config.runs} labelling run(s).",
        "",
        f"Keep rule: {keep_rule(config)}.",
        "",
        "**Kept:** " + (", ".join(f"`{n}`" for n in result.kept) if result.kept else "none"),
        "",
        "| capability | selected | coverage median [IQR] | gap median | ER+ (run 0) | ER- (run 0) | kept |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    first = result.runs[0].capabilities if result.runs else {}
    for s in ordered(result):
        run0 = first.get(s.capability)
        lines.append(
            f"| `{s.capability}` | {s.selected}/{s.runs} | {_pct(s.coverage_median)} "
            f"[{_pct(s.coverage_q1)}, {_pct(s.coverage_q3)}] | {_num(s.gap_median)} | "
            f"{_pct(run0.er_plus if run0 else None)} | {_pct(run0.er_minus if run0 else None)} | "
            f"{'yes' if s.kept else 'no'} |"
        )
    lines += ["", "Undefined: no trajectory of that outcome needed the capability (the ratio has no denominator).", ""]
    on_er_minus = [s.capability for s in ordered(result) if s.kept and s.gap_median is None]
    if on_er_minus:
        names = ", ".join(f"`{n}`" for n in on_er_minus)
        lines += [f"Kept with an undefined gap (tested on ER- alone, see the keep rule): {names}.", ""]
    if plots:
        lines += [f"![{p.stem}]({p.name})" for p in plots] + [""]
    else:
        lines += ["(Plots need matplotlib: `pip install 'trace-envs[analysis]'`.)", ""]
    lines += ["## Dictionary", ""]
    lines += [f"- `{c.name}`: {c.description}" for c in result.dictionary.capabilities]
    if result.agreement:
        lines += ["", "## Agreement with the offline probes", "", "| capability | compared | accuracy | kappa |"]
        lines += ["| --- | --- | --- | --- |"]
        for a in result.agreement:
            kappa = "undefined" if a.kappa is None else f"{a.kappa:.2f}"
            lines.append(f"| `{a.capability}` | {a.compared} | {_pct(a.accuracy)} | {kappa} |")
    usage = result.discovery_usage + result.labelling_usage
    lines += [
        "",
        "## Cost",
        "",
        f"{usage.input_tokens} input and {usage.output_tokens} output tokens; ${result.cost_usd:.4f} "
        f"(discovery ${result.discovery_usage.cost_usd:.4f}, labelling ${result.labelling_usage.cost_usd:.4f}).",
        "",
    ]
    return "\n".join(lines)


def write_report(result: AnalysisResult, out: str | Path) -> Path:
    """Write ``report.md`` and the plots into ``out``; returns the report's path."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    plots = write_plots(result, folder)
    path = folder / "report.md"
    path.write_text(render_markdown(result, plots), encoding="utf-8")
    return path
