"""The analysis' two plots, like the paper's Figure 2: how many labelling runs selected each capability, and
the median share of failures lacking it (IQR error bars). Every bar carries its value, so a zero reads as
zero rather than as missing data, and run counts have whole-number ticks. Needs matplotlib."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .models import AnalysisResult, CapabilitySummary

KEPT, DROPPED = "#2e8b57", "#9e9e9e"


def ordered(result: AnalysisResult) -> list[CapabilitySummary]:
    """The summary rows, most often selected first (then by coverage, then by name): the plots' order."""
    return sorted(result.summary, key=lambda s: (-s.selection_frequency, -(s.coverage_median or 0.0), s.capability))


def _bars(axis: Any, rows: list[CapabilitySummary], values: list[float], labels: list[str], **options: Any) -> None:
    """Horizontal bars top-down in ``rows`` order, each labelled at its end; a zero bar gets a tick mark at 0
    in its colour (a bar of width 0 draws nothing)."""
    names = [s.capability for s in rows][::-1]
    colors = [KEPT if s.kept else DROPPED for s in rows][::-1]
    bars = axis.barh(names, values[::-1], color=colors, **options)
    axis.bar_label(bars, labels=labels[::-1], padding=3, fontsize=8)
    for position, (value, color) in enumerate(zip(values[::-1], colors, strict=True)):
        if value == 0:
            axis.plot([0], [position], marker="|", markersize=14, markeredgewidth=3, color=color, clip_on=False)


def selection_figure(result: AnalysisResult) -> Any:
    """Runs that selected each capability, out of all labelling runs (whole-number ticks)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    rows = ordered(result)
    runs = max(1, result.config.runs)
    figure, axis = plt.subplots(figsize=(7, 1.2 + 0.4 * len(rows)))
    _bars(axis, rows, [float(s.selected) for s in rows], [f"{s.selected}/{s.runs}" for s in rows])
    axis.set_xlim(0, runs * 1.12)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel(f"runs selected (of {result.config.runs})")
    axis.set_title("Capability selection frequency (green: kept)")
    return figure


def coverage_figure(result: AnalysisResult) -> Any:
    """Median coverage of failed trajectories per capability, IQR as error bars."""
    import matplotlib.pyplot as plt

    rows = ordered(result)
    figure, axis = plt.subplots(figsize=(7, 1.2 + 0.4 * len(rows)))
    medians = [100 * (s.coverage_median or 0.0) for s in rows]
    low = [100 * ((s.coverage_median or 0.0) - (s.coverage_q1 or 0.0)) for s in rows][::-1]
    high = [100 * ((s.coverage_q3 or 0.0) - (s.coverage_median or 0.0)) for s in rows][::-1]
    _bars(axis, rows, medians, [f"{m:.0f}%" for m in medians], xerr=[low, high], capsize=3)
    axis.set_xlim(0, 112)
    axis.set_xticks(range(0, 101, 20))
    axis.set_xlabel("median coverage of failed trajectories (%), error bars: IQR")
    axis.set_title("Failure coverage per capability (green: kept)")
    return figure


def write_plots(result: AnalysisResult, out: Path, suffix: str = "") -> list[Path]:
    """``selection_frequency{suffix}.png`` and ``coverage{suffix}.png``; empty when matplotlib is not
    installed or nothing was analysed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        return []
    if not result.summary:
        return []
    paths = []
    for stem, build in (("selection_frequency", selection_figure), ("coverage", coverage_figure)):
        figure = build(result)
        figure.tight_layout()
        paths.append(out / f"{stem}{suffix}.png")
        figure.savefig(paths[-1], dpi=120, metadata={"Software": None})
        plt.close(figure)
    return paths
