"""``trace-envs list | describe | play`` on the shipped starter env."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from typer.testing import CliRunner

from trace_envs.cli import build_app

runner = CliRunner()
app = build_app()


def test_help_lists_every_command() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("list", "describe", "play"):
        assert command in result.output
    for command in ("list", "describe", "play"):
        assert runner.invoke(app, [command, "--help"]).exit_code == 0


def test_list_shows_envs_with_capability() -> None:
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    assert "trace/order-cancel-v0" in result.output
    rows = {row["env_id"]: row for row in json.loads(runner.invoke(app, ["list", "--json"]).output)}
    assert rows["trace/order-cancel-v0"] == {
        "env_id": "trace/order-cancel-v0",
        "capability": "precondition_verification",
        "domain": "toy_shop",
        "max_turns": 12,
    }
    assert rows["trace/tau2-retail-v0"]["capability"] is None


def test_describe_as_json_with_a_knob() -> None:
    result = runner.invoke(app, ["describe", "trace/order-cancel-v0", "--json", "-o", "distractor_orders=0"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["capability"] == "precondition_verification"
    assert data["knobs"] == [
        {"name": "distractor_orders", "default": 0, "description": "Other orders in the shop's state."}
    ]
    assert data["example"]["solution"][0].startswith('{"name": "get_order_details"')


def test_play_oracle_prints_a_solved_episode() -> None:
    result = runner.invoke(app, ["play", "trace/order-cancel-v0", "--seed", "3", "--policy", "oracle"])
    assert result.exit_code == 0, result.output
    assert "assistant → get_order_details" in result.output
    assert "###STOP###" in result.output
    assert "1.000" in result.output


def test_play_flawed_fails_where_the_deficit_matters() -> None:
    result = runner.invoke(app, ["play", "trace/order-cancel-v0", "--seed", "0", "--policy", "flawed"])
    assert result.exit_code == 0, result.output
    assert "cancel_order" in result.output
    assert "0.000" in result.output


def test_bad_input_gives_clear_errors() -> None:
    unknown = runner.invoke(app, ["play", "trace/nope-v0", "--policy", "oracle"])
    assert unknown.exit_code != 0
    assert "not a registered env" in unknown.output
    bad_policy = runner.invoke(app, ["play", "trace/order-cancel-v0", "--policy", "magic"])
    assert bad_policy.exit_code != 0
    assert "unknown policy spec 'magic'" in str(bad_policy.exception)
    typo = runner.invoke(app, ["play", "trace/order-cancel-v0", "--policy", "flawed:date_reasoning"])
    assert typo.exit_code == 2
    assert "'date_reasoning'" in typo.output and "datetime_reasoning" in typo.output
    no_tty = runner.invoke(app, ["play", "trace/order-cancel-v0"])
    assert no_tty.exit_code != 0
    assert "stdin is not a terminal" in no_tty.output
    bad_option = runner.invoke(app, ["describe", "trace/order-cancel-v0", "-o", "distractor_orders"])
    assert "expected KEY=VALUE" in bad_option.output


def test_play_is_interactive_in_a_terminal() -> None:
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "trace_envs.cli", "play", "trace/order-cancel-v0", "--seed", "3"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.write(leader, b'{"name": "get_order_details", "arguments": {"order_id": "#W4992383"}}\n')
    os.write(leader, b"Sorry, order #W4992383 is already delivered and cannot be cancelled.\n")
    output, _ = process.communicate(timeout=60)
    os.close(leader)
    os.close(follower)
    text = output.decode()
    assert process.returncode == 0, text
    assert '"status": "delivered"' in text
    assert "1.000" in text
