"""``trace-envs report DIR``: writes the report (default DIR/report), lists what is missing, and a bad run
folder is one line naming the file (exit code 2)."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from tests.cli.test_help import TYPE_LEAK
from tests.cli.test_missing_extras import run_blocked
from trace_envs.cli import build_app

runner = CliRunner()
app = build_app()


def test_report_writes_into_the_run_folder_by_default(run_dir: Path) -> None:
    result = runner.invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert (run_dir / "report" / "report.html").is_file() and (run_dir / "report" / "report.md").is_file()
    assert (
        f"wrote {run_dir / 'report' / 'report.md'} and {run_dir / 'report' / 'report.html'} (6 plots)" in result.output
    )
    assert "not in the run folder" not in result.output
    again = runner.invoke(app, ["report", str(run_dir)])  # the report folder inside the run is not read back
    assert again.exit_code == 0 and again.output == result.output


def test_report_lists_what_is_missing(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path), "-o", str(tmp_path / "out"), "--title", "Demo"])
    assert result.exit_code == 0, result.output
    assert result.output.count("not in the run folder:") == 6
    assert (tmp_path / "out" / "report.md").read_text(encoding="utf-8").startswith("# Demo\n")


def test_bad_input_is_one_line_and_exit_code_2(run_dir: Path, tmp_path: Path) -> None:
    (run_dir / "analysis" / "analysis.json").write_text("{", encoding="utf-8")
    result = runner.invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"trace-envs report: {run_dir / 'analysis' / 'analysis.json'}: ")
    assert not (run_dir / "report").exists()  # nothing half-written
    missing = runner.invoke(app, ["report", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "is not a folder" in missing.stderr


def test_help_lists_report_after_evaluate_and_route() -> None:
    output = runner.invoke(app, ["--help"], terminal_width=200).output  # rich's panels at 100 columns or more
    listed = [line.split()[1] for line in output.splitlines() if re.match(r"^│ [a-z0-9-]+ ", line)]
    assert "report" in listed
    earlier = [name for name in ("route", "evaluate") if name in listed]
    assert all(listed.index(name) < listed.index("report") for name in earlier), listed
    help_text = runner.invoke(app, ["report", "-h"]).output
    assert "Usage: trace-envs report [OPTIONS] DIR" in help_text and not TYPE_LEAK.findall(help_text)


def test_without_matplotlib_report_names_the_extra(run_dir: Path, tmp_path: Path) -> None:
    code = f"sys.argv = ['trace-envs', 'report', {str(run_dir)!r}]\nfrom trace_envs.cli import main\nmain()\n"
    result = run_blocked(["matplotlib"], code, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trace-envs report: needs the 'analysis' extra"), result.stderr
    assert not (run_dir / "report").exists()


def test_report_of_a_real_device_evaluation(tmp_path: Path) -> None:
    run = tmp_path / "run"
    evaluated = runner.invoke(
        app,
        ["evaluate", "--target", "device", "--policy", "gold=oracle", "--policy", "flawed", "--out", str(run / "eval")],
    )
    assert evaluated.exit_code == 0, evaluated.output
    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    text = (run / "report" / "report.md").read_text(encoding="utf-8")
    assert "| gold | scripted agent | `oracle` | greedy | overall | 48 | 100.0% [100.0%, 100.0%] |" in text
    assert "| 1.000 [1.000, 1.000] | 48 |" in text  # the oracle's mean similarity, then its episodes
    assert "2 policies on all 48 device tasks (split all)" in text  # which tasks: every one (no limit)
    flawed = next(line for line in text.splitlines() if line.startswith("| flawed | scripted agent |"))
    assert "| 0.0% [0.0%, 0.0%] |" in flawed and "| 1.000" not in flawed
    assert "device: no trained method with a known rollout count to place." in text  # scripted agents are no method
