"""``trace-envs report``: the Markdown and self-contained HTML report of a run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app


@app.command("report")
def report_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="DIR", help="Run folder: evaluation, baselines, analysis, synthesis, adapters.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="DIR", help="Where report.md, report.html and the plots go [DIR/report]."),
    ] = None,
    title: Annotated[str, typer.Option(help="The report's heading.")] = "TRACE run report",
) -> None:
    """Write the report of a run: pass rates with intervals, per-capability gains, pass rate against
    rollouts spent, capability selection and coverage, the synthesis gate table and the training curves.

    Every output under DIR is found by its file name (results.json, baseline.json, analysis.json, the
    synthesis manifest.json, trace_adapter.json); a part the folder lacks is listed as missing.
    report.html embeds its plots and needs nothing else to open.

    Example: trace-envs report runs/demo --out runs/demo/report
    """
    from trace_envs.report import ReportInputError, write_report

    target = out if out is not None else run_dir / "report"
    try:
        files = write_report(run_dir, target, title=title)
    except ReportInputError as exc:
        typer.echo(f"trace-envs report: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {files.markdown} and {files.html} ({len(files.plots)} plots)")
    for missing in files.missing:
        typer.echo(f"  not in the run folder: {missing}")
