"""Matplotlib on the Agg backend (no display needed), and the PNG conventions every report plot shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
"""Colour of the n-th series (matplotlib's tab10 without its cyan, which is hard to see on white)."""

DPI = 110


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; a missing matplotlib raises ``ModuleNotFoundError``
    (the CLI turns it into the line that names the ``analysis`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(figure: Any, path: Path) -> Path:
    """Write ``figure`` as a PNG without the software stamp (same inputs, same bytes) and close it."""
    plt = pyplot()
    figure.tight_layout()
    figure.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(figure)
    return path
