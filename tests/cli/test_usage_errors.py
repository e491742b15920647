"""Bad arguments are one ``error:`` line, exit code 2, whether click finds them while it parses the
arguments or a command's own check does: no usage line, no "Try -h" line, no boxed panel."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app

runner = CliRunner()
app = build_app()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["rollout", "--bogus"], "No such option: --bogus"),
        (["rollout", "-o", "x.jsonl"], "Missing option '--env'"),
        (["rollout", "-e", "trace/order-cancel-v0", "-o", "x.jsonl", "-n", "0"], "'--episodes' / '-n'"),
        (["nope"], "No such command 'nope'"),
        (["--bogus"], "No such option: --bogus"),
        (["baseline", "merge", "--bogus"], "No such option: --bogus"),
        (["make-tiny-model", "a", "-o", "b"], "DIR a and --out b differ: give one"),  # the command's own check
    ],
    ids=["unknown-option", "missing-option", "out-of-range", "unknown-command", "app-option", "subgroup", "body"],
)
def test_a_usage_error_is_one_error_line(args: list[str], needle: str) -> None:
    result = runner.invoke(app, args, terminal_width=80)  # each fails before anything is written
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and needle in lines[0], lines[0]
    assert "-h'" in lines[0] and "╭" not in result.output and "Usage:" not in result.output


@pytest.mark.parametrize("args", [[], ["baseline"]], ids=["app", "subgroup"])
def test_a_bare_group_shows_its_help(args: list[str]) -> None:
    """Typer prints nothing for click's "no arguments: show the help" signal; the help is printed."""
    result = runner.invoke(app, args, terminal_width=80)
    assert result.exit_code == 2
    assert result.output.startswith("Usage: ") and "Commands:" in result.output, result.output
