"""The HTML report in a real headless browser (Chromium): every plot decodes to a non-blank image, and a
screenshot of the unmodified page shows each plot where the page lays it out.

Skipped only when no Chromium binary exists (CI installs Debian's ``chromium``, see ``.ci/run``)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from trace_envs.report import write_report
from trace_envs.report.figures import COLORS

from .multi_target import make_multi_target_run

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH = 1200
PROBE = """<script>
window.addEventListener("load", () => {
  const images = [...document.images].map((img) => {
    const canvas = document.createElement("canvas");
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const context = canvas.getContext("2d");
    context.drawImage(img, 0, 0);
    const data = img.naturalWidth ? context.getImageData(0, 0, img.naturalWidth, img.naturalHeight).data : [];
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4 * 7) colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    const palette = PALETTE.map(([r, g, b]) => {
      let count = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 24) count += 1;
      }
      return count;
    });
    const box = img.getBoundingClientRect();
    return {plot: img.dataset.plot, width: img.naturalWidth, height: img.naturalHeight, colours: colours.size,
            palette, box: [box.left + window.scrollX, box.top + window.scrollY, box.width, box.height]};
  });
  const tables = [...document.querySelectorAll("table")].map((table) => ({
    header: table.querySelector("th").textContent, width: table.scrollWidth,
    room: table.closest("section").clientWidth}));
  document.body.setAttribute("data-probe", JSON.stringify({images, tables, height: document.documentElement.scrollHeight}));
});
</script>"""
"""Appended to a copy of the page: each image's decoded size, its distinct colours, how many of its pixels have
each :data:`PALETTE` colour, and where it is laid out; each table's full width against its section's."""

PALETTE = list(COLORS)
"""The series colours (the n-th series of a plot)."""


def chromium() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(f"no headless browser: none of {', '.join(BROWSERS)} is on PATH (Debian: apt-get install chromium)")


def run_browser(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
        f"--user-data-dir={profile}", "--no-first-run", *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def probe(binary: str, page: Path, tmp_path: Path) -> dict[str, Any]:
    """Load a copy of ``page`` with :data:`PROBE` and read back what it measured from the DOM."""
    copy = tmp_path / "probe.html"
    rgb = json.dumps([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in PALETTE])
    script = PROBE.replace("PALETTE", rgb)
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "\n</body>"), encoding="utf-8")
    result = run_browser(
        binary, tmp_path / "profile-dom", f"--window-size={WIDTH},1000", "--virtual-time-budget=10000", "--dump-dom",
        copy.as_uri(),
    )  # fmt: skip
    found = re.search(r'data-probe="([^"]*)"', result.stdout)
    assert found, f"the page's load handler never ran (exit {result.returncode}): {result.stderr[-2000:]}"
    return dict(json.loads(html.unescape(found.group(1))))


def test_the_page_renders_its_plots_in_chromium(run_dir: Path, tmp_path: Path) -> None:
    binary = chromium()
    files = write_report(run_dir, tmp_path / "report")
    measured = probe(binary, files.html, tmp_path)
    images = measured["images"]
    assert [image["plot"] for image in images] == [p.name for p in files.plots]
    for image in images:
        assert image["width"] > 300 and image["height"] > 150, image  # decoded: naturalWidth > 0
        assert image["colours"] > 20, f"{image['plot']} decoded blank"
        assert image["box"][2] > 300 and image["box"][3] > 100, image  # laid out at a readable size

    shot = tmp_path / "page.png"
    height = int(measured["height"])
    result = run_browser(
        binary, tmp_path / "profile-shot", f"--window-size={WIDTH},{height}", "--virtual-time-budget=10000",
        f"--screenshot={shot}", files.html.as_uri(),
    )  # fmt: skip
    assert shot.is_file(), f"no screenshot (exit {result.returncode}): {result.stderr[-2000:]}"
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))[:, :, :3]
    assert pixels.shape[1] == WIDTH and pixels.shape[0] >= min(height, 4000) - 1, pixels.shape
    for image in images:
        left, top, width, box_height = (round(v) for v in image["box"])
        if top + box_height > pixels.shape[0]:
            continue  # below a screenshot Chromium clipped (the page is taller than its maximum)
        region = pixels[top + 2 : top + box_height - 2, left + 2 : left + width - 2]
        colours = {tuple(p) for p in (region * 255).astype(int).reshape(-1, 3)[::5].tolist()}
        non_white = float((region.min(axis=2) < 0.9).mean())
        assert len(colours) > 20 and non_white > 0.02, f"the screenshot shows no plot where {image['plot']} is"
    blank = pixels[:20, -20:]  # the page's right margin stays white: the check can tell a plot from paper
    assert len({tuple(p) for p in (blank * 255).astype(int).reshape(-1, 3).tolist()}) == 1


def test_flat_series_zero_bars_and_wide_tables_show_in_chromium(tmp_path: Path) -> None:
    """A multi-target run where most series are 0: every policy's bar and every adapter's curve leaves pixels
    of its colour beyond its legend entry; no table is wider than its section (the full gate table shows)."""
    binary = chromium()
    run = make_multi_target_run(tmp_path / "run")
    files = write_report(run, tmp_path / "report", targets=["device", "retail", "airline"])
    measured = probe(binary, files.html, tmp_path)
    images = {image["plot"]: image for image in measured["images"]}
    assert sorted(images) == sorted(p.name for p in files.plots)

    def visible(plot: str, series: int) -> bool:
        # a legend entry alone is ~100-220 pixels of its colour; a bar at 0 or a curve under three others, drawn
        # as a mark of its own, adds several hundred more
        return images[plot]["palette"][series] >= 300

    for target in ("device", "tau2-retail", "tau2-airline"):  # base, model and routed; two of them all at 0
        assert all(visible(f"pass_rate_{target}.png", n) for n in range(3)), images[f"pass_rate_{target}.png"]
    assert all(visible("training_curves.png", n) for n in range(4)), images["training_curves.png"]  # all at 0
    assert len(measured["tables"]) == 18
    for table in measured["tables"]:  # the gate table and the policies' long specs wrap: none is cut off
        assert table["width"] <= table["room"] + 1, table
