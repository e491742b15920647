"""One meaning per short option across every command: ``-o`` is ``--out``, ``-e`` is ``--env``, ``-p`` is
``--policy``; ``--option KEY=VALUE`` and ``--import MODULE`` have no short form (so that ``-o k=v`` can
never write a file named ``k=v``)."""

from __future__ import annotations

from typing import Any

import typer

from trace_envs.cli import build_app

SCHEME = {"-o": "--out", "-e": "--env", "-p": "--policy"}
LONG_ONLY = ("--option", "--import")


def options_by_command() -> dict[str, list[Any]]:
    """Each command's options (Typer's own click objects, read by duck typing)."""
    commands = typer.main.get_command(build_app()).commands  # type: ignore[attr-defined]
    assert {"rollout", "play", "describe", "train", "route", "analyze"} <= set(commands)
    return {name: [p for p in command.params if p.param_type_name == "option"] for name, command in commands.items()}


def test_each_short_option_means_one_long_option_everywhere() -> None:
    seen: dict[str, set[str]] = {}
    for command, options in options_by_command().items():
        for option in options:
            longs = [o for o in option.opts if o.startswith("--")]
            for short in (o for o in option.opts if not o.startswith("--")):
                seen.setdefault(short, set()).update(longs)
                if short in SCHEME:
                    assert longs == [SCHEME[short]], f"{command}: {short} is {longs}, not {SCHEME[short]}"
            for long, short in ((v, k) for k, v in SCHEME.items()):
                if long in option.opts:
                    assert short in option.opts, f"{command}: {long} has no {short}"
            if any(o in LONG_ONLY for o in option.opts):
                assert len(option.opts) == 1, f"{command}: {option.opts} should have no short form"
    assert all(len(longs) == 1 for longs in seen.values()), seen


def test_commands_that_take_env_ids_take_import_and_options() -> None:
    options = {name: {o for p in params for o in p.opts} for name, params in options_by_command().items()}
    for command in ("rollout", "play", "describe", "train"):
        assert {"--import", "--option"} <= options[command], command
    assert "--import" in options["route"]
    assert "-o" in options["rollout"] and "-o" in options["train"] and "-o" not in options["play"]
