"""The help of ``trace-envs``: ``-h`` everywhere, ``--version``, no Python types, pipeline order."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import trace_envs
from trace_envs.cli import build_app

runner = CliRunner()
app = build_app()
COMMANDS = ["list", "describe", "play", "tau2-replay", "tau2-evaluate", "rollout", "analyze"]
COMMANDS += ["make-model", "make-tiny-model", "train", "route"]
TYPE_LEAK = re.compile(r"(?<![\w:])<(bool|str|int|float|path|int range|float range|list\[[^>]*\])>|\{[a-z_]+\}")
"""Typer's type labels (``<bool>``, ``<list[str]>``; help text such as ``hf:<path>`` is not one) and its
``{arg}`` usage form."""


@pytest.mark.parametrize("width", [80, 200])
def test_commands_are_listed_in_pipeline_order(width: int) -> None:
    result = runner.invoke(app, ["--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    row = re.compile(r"^(│ |  )([a-z0-9-]+) ")
    listed = [match[2] for line in result.output.splitlines() if (match := row.match(line))]
    commands = [name for name in listed if name in COMMANDS]
    assert commands == COMMANDS, listed


@pytest.mark.parametrize("command", [[], ["rollout"], ["baseline"]])
def test_the_app_and_its_commands_take_one_layout_at_each_width(command: list[str]) -> None:
    """Below 100 columns (and in any non-tty) every help is click's plain layout, ``trace-envs -h`` too."""
    narrow = runner.invoke(app, [*command, "--help"], terminal_width=80).output
    wide = runner.invoke(app, [*command, "--help"], terminal_width=200).output
    assert "╭" not in narrow and "Options:" in narrow, narrow
    assert "╭─ Options" in wide, wide


def test_the_plain_layout_shows_no_markup_escapes() -> None:
    output = runner.invoke(app, ["rollout", "--help"], terminal_width=80).output
    assert "\\[" not in output, output
    words = " ".join(output.split())
    assert "hf:<path>[@<adapter>]" in words and "folder [default: $TRACE_ENVS_CACHE_DIR or" in words, output


def test_the_plain_command_list_keeps_each_first_sentence_whole() -> None:
    output = runner.invoke(app, ["--help"], terminal_width=80).output
    assert "..." not in output.split("Commands:")[1], output
    assert "List the registered trace/ envs with their capability and domain." in " ".join(output.split())


def test_a_repeated_argument_says_so_once_in_the_usage_line() -> None:
    output = runner.invoke(app, ["validate", "--help"], terminal_width=80).output
    assert "validate [OPTIONS] MODULE.py...\n" in output, output


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_dash_h_is_help_and_shows_no_python_types(command: str | None) -> None:
    args = [command] if command else []
    long = runner.invoke(app, [*args, "--help"])
    short = runner.invoke(app, [*args, "-h"])
    assert long.exit_code == 0 and short.exit_code == 0, short.output
    assert short.output == long.output
    assert not TYPE_LEAK.findall(long.output), TYPE_LEAK.findall(long.output)


def test_options_show_metavars_and_flags_show_none() -> None:
    output = runner.invoke(app, ["analyze", "-h"], terminal_width=200).output
    assert re.search(r"--runs\s+R \[x>=1\]", output)
    assert re.search(r"--out\s+-o\s+DIR", output)  # -o is --out in every command
    assert re.search(r"--batch\s+--no-batch\s+Label through", output)  # a flag: no metavar
    assert "Usage: trace-envs analyze [OPTIONS] STORE" in output
    output = runner.invoke(app, ["train", "-h"], terminal_width=200).output
    assert re.search(r"--env\s+-e\s+ENV_ID", output) and re.search(r"--model\s+MODEL", output)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"trace-envs {trace_envs.__version__}"


def _all_command_paths(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's path, subcommands too (typer vendors click: a group is what has ``commands``)."""
    paths = []
    for name, command in group.commands.items():
        paths.append((*prefix, name))
        if hasattr(command, "commands"):
            paths += _all_command_paths(command, (*prefix, name))
    return paths


@pytest.mark.parametrize("path", _all_command_paths(typer.main.get_command(app)), ids=" ".join)
def test_help_fits_an_80_column_terminal(path: tuple[str, ...]) -> None:
    """Nothing is cut off with an ellipsis, and no docstring line break lands mid-sentence."""
    output = runner.invoke(app, [*path, "--help"], terminal_width=80, env={"COLUMNS": "80"}).output
    assert "…" not in output, output
    assert max(len(line) for line in output.splitlines()) <= 80


def test_list_keeps_capability_names_whole_at_80_columns() -> None:
    import json

    rows = json.loads(runner.invoke(app, ["list", "--json"]).output)
    output = runner.invoke(app, ["list"], terminal_width=80, env={"COLUMNS": "80"}).output
    for name in {row["capability"] for row in rows if row["capability"]}:
        assert name in output, f"{name} is split in:\n{output}"


@pytest.mark.parametrize("path", _all_command_paths(typer.main.get_command(app)), ids=" ".join)
def test_help_examples_use_paths_a_user_has(path: tuple[str, ...]) -> None:
    """Not the repository's own layout (``../shared/data/tau2`` sits beside this repository's clone only)."""
    output = runner.invoke(app, [*path, "--help"], terminal_width=200).output
    assert "shared/" not in output, output
