"""Matplotlib on the Agg backend (no display needed), and the conventions every report plot shares: PNG
without a software stamp, series told apart by colour, marker and line style, a value that is zero drawn
as a visible mark, and an axis that stays readable when every value is the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
"""Colour of the n-th series (matplotlib's tab10 without its cyan, which is hard to see on white)."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
DPI = 110


def style(index: int) -> dict[str, Any]:
    """Colour, marker and line style of the n-th series: overlapping series stay told apart."""
    return {
        "color": COLORS[index % len(COLORS)],
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": LINESTYLES[index % len(LINESTYLES)],
    }


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; a missing matplotlib raises ``ModuleNotFoundError``
    (the CLI turns it into the line that names the ``analysis`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def percent_axis(axis: Any, label: str = "pass rate (%)") -> None:
    """A 0-100 % y-axis with a little room below 0, so a series at 0 is drawn above the frame, not on it."""
    axis.set_ylim(-4, 104)
    axis.set_yticks(range(0, 101, 20))
    axis.set_ylabel(label)
    axis.axhline(0, color="#bbbbbb", linewidth=0.8, zorder=0)


def flat_axis(axis: Any, values: list[float], unit: str = "") -> None:
    """When every plotted value is the same, centre the y-axis on it with whole-unit room either side (not
    matplotlib's ±4% of nothing) and say so in the panel."""
    if not values or max(values) - min(values) > 1e-12:
        return
    value = values[0]
    axis.set_ylim(value - 1, value + 1)
    axis.set_yticks([value - 1, value, value + 1])
    axis.axhline(value, color="#bbbbbb", linewidth=0.8, zorder=0)
    axis.text(0.5, 0.92, f"flat: every value is {value:g}{unit}", transform=axis.transAxes, ha="center", fontsize=8)


def save(figure: Any, path: Path) -> Path:
    """Write ``figure`` as a PNG without the software stamp (same inputs, same bytes) and close it."""
    plt = pyplot()
    figure.tight_layout()
    figure.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(figure)
    return path
