"""``trace-envs list | describe | play`` on the shipped starter env."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app

from .user_envs import CAPABILITY_ID, ECHO_ID

runner = CliRunner()
app = build_app()
USER_MODULE = "tests.cli.user_envs"


def one_line(output: str) -> str:
    """The output with Rich's line wrapping and box borders taken out."""
    return " ".join(output.replace("│", " ").split())


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
        "kind": "capability",
        "capability": "precondition_verification",
        "domain": "toy_shop",
        "max_turns": 12,
    }
    assert rows["trace/tau2-retail-v0"]["capability"] is None and rows["trace/tau2-retail-v0"]["kind"] == "tau2_target"
    assert rows["trace/device-v0"]["kind"] == "device_target"


def test_describe_as_json_with_a_knob() -> None:
    result = runner.invoke(app, ["describe", "trace/order-cancel-v0", "--json", "--option", "distractor_orders=0"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["capability"] == "precondition_verification"
    assert data["knobs"][0] == {
        "name": "distractor_orders",
        "default": 0,
        "description": "Other orders in the shop's state.",
    }
    assert [knob["name"] for knob in data["knobs"]] == ["distractor_orders", "lookup_required"]
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
    assert bad_policy.exit_code == 2 and bad_policy.exception is not None
    assert "unknown policy spec 'magic'" in one_line(bad_policy.output)
    typo = runner.invoke(app, ["play", "trace/order-cancel-v0", "--policy", "flawed:date_reasoning"])
    assert typo.exit_code == 2
    assert "'date_reasoning'" in one_line(typo.output) and "datetime_reasoning" in one_line(typo.output)
    no_tty = runner.invoke(app, ["play", "trace/order-cancel-v0"])
    assert no_tty.exit_code != 0
    assert "stdin is not a terminal" in no_tty.output
    bad_option = runner.invoke(app, ["describe", "trace/order-cancel-v0", "--option", "distractor_orders"])
    assert "expected KEY=VALUE" in bad_option.output


def play_in_a_terminal(*typed: bytes) -> tuple[int, str]:
    """``trace-envs play trace/order-cancel-v0 --seed 3`` with a pseudo-terminal as its input, ``typed`` written to
    it: the exit code and everything it printed."""
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "trace_envs.cli", "play", "trace/order-cancel-v0", "--seed", "3"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
    )
    for keys in typed:
        os.write(leader, keys)
    output, _ = process.communicate(timeout=60)
    os.close(leader)
    os.close(follower)
    return process.returncode, output.decode()


LOOKUP = b'{"name": "get_order_details", "arguments": {"order_id": "#W4992383"}}\n'


def test_play_is_interactive_in_a_terminal() -> None:
    code, text = play_in_a_terminal(LOOKUP, b"Sorry, order #W4992383 is already delivered and cannot be cancelled.\n")
    assert code == 0, text
    assert '"status": "delivered"' in text
    assert "1.000" in text


def test_ctrl_d_at_the_play_prompt_ends_the_episode_cleanly() -> None:
    code, text = play_in_a_terminal(LOOKUP, b"\x04")  # Ctrl-D at the start of a line: the end of input
    assert code == 0, text
    assert "ended: end of input (Ctrl-D) after 1 turn: unscored" in text, text
    assert "Aborted" not in text


@pytest.mark.parametrize(
    "args",
    [
        ["play", "trace/order-cancel-v0", "--policy", "bogus"],
        ["play", "trace/order-cancel-v0", "--policy", "oracle", "--seed", "-1"],
        ["describe", "trace/order-cancel-v0", "--seed", "-1"],
        ["play", "trace/order-cancel-v0", "--policy", "oracle", "--option", "distractor_orders=abc"],
        ["describe", "trace/order-cancel-v0", "--option", "distractor_orders=-2"],
        ["describe", "trace/order-cancel-v0", "--option", "bogus=1"],
        ["play", "trace/order-cancel-v0", "--policy", "flawed:precondition_verificatio"],
        ["play", "trace/order-cancel-v0", "--policy", "oracle", "-o", "distractor_orders=1"],  # -o is only --out
    ],
)
def test_bad_arguments_are_a_usage_error_not_a_traceback(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, ValueError | TypeError)


def test_bad_values_name_the_field_and_the_fix() -> None:
    seed = one_line(runner.invoke(app, ["describe", "trace/order-cancel-v0", "--seed", "-1"]).output)
    assert "--seed" in seed and "greater than or equal to 0" in seed
    knob = one_line(
        runner.invoke(app, ["describe", "trace/order-cancel-v0", "--option", "distractor_orders=abc"]).output
    )
    assert "--option" in knob and "distractor_orders='abc'" in knob and "Its knobs: distractor_orders" in knob
    flawed = one_line(
        runner.invoke(app, ["play", "trace/order-cancel-v0", "-p", "flawed:precondition_verificatio"]).output
    )
    assert "unknown capability 'precondition_verificatio'" in flawed and "precondition_verification," in flawed


def test_play_and_describe_an_env_of_your_own() -> None:
    played = runner.invoke(app, ["play", ECHO_ID, "--import", USER_MODULE, "--policy", "noop", "--option", "turns=3"])
    assert played.exit_code == 0, played.output
    assert played.output.count("echo") == 3 and "1.000" in played.output
    by_module = runner.invoke(app, ["play", f"{USER_MODULE}:{CAPABILITY_ID}", "-p", "oracle", "--seed", "3"])
    assert by_module.exit_code == 0, by_module.output
    assert "assistant → get_order_details" in by_module.output and "1.000" in by_module.output
    described = runner.invoke(app, ["describe", f"{USER_MODULE}:{CAPABILITY_ID}", "--json"])
    assert described.exit_code == 0, described.output
    assert json.loads(described.output)["capability"] == "careful_cancelling"
    not_capability = runner.invoke(app, ["describe", ECHO_ID, "--import", USER_MODULE])
    assert not_capability.exit_code == 2 and "not a capability env" in one_line(not_capability.output)
    no_oracle = runner.invoke(app, ["play", ECHO_ID, "--import", USER_MODULE, "--policy", "oracle"])
    assert no_oracle.exit_code == 2 and "oracle cannot play usertest/Echo-v0" in one_line(no_oracle.output)
    missing = runner.invoke(app, ["play", "no_such_module_here:x/Y-v0", "--policy", "noop"])
    assert missing.exit_code == 2 and "cannot import 'no_such_module_here'" in one_line(missing.output)


def test_import_finds_a_module_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_envs_here.py").write_text(
        f"import gymnasium as gym\ngym.register(id='mine/Echo-v0', entry_point='{USER_MODULE}:EchoEnv')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "my_envs_here", raising=False)
    result = runner.invoke(app, ["play", "mine/Echo-v0", "--import", "my_envs_here", "--policy", "noop"])
    assert result.exit_code == 0, result.output
    assert "echo" in result.output


def test_plain_flawed_is_the_envs_own_capability_in_play_and_rollout(tmp_path: Path) -> None:
    from trace_envs.rollout import load_episodes

    out = tmp_path / "x.jsonl"
    rolled = runner.invoke(
        app, ["rollout", "-e", "trace/order-cancel-v0", "-p", "flawed", "--seeds", "0-5", "-o", str(out)]
    )
    assert rolled.exit_code == 0, rolled.output
    records = {r.seed: r for r in load_episodes(out)}
    assert {r.policy for r in records.values()} == {"flawed"}
    for seed, record in records.items():
        played = runner.invoke(app, ["play", "trace/order-cancel-v0", "-p", "flawed", "--seed", str(seed)])
        assert played.exit_code == 0, played.output
        assert ("1.000" in played.output) == record.success
    assert 0 < sum(r.success for r in records.values()) < len(records)


def test_describe_works_more_than_once_in_a_process() -> None:
    """``trace_envs.describe`` stays the function (a submodule of the same name used to replace it)."""
    import trace_envs

    first = trace_envs.describe("trace/order-cancel-v0", seed=1)
    assert trace_envs.describe("trace/order-cancel-v0", seed=1) == first
    for _ in range(2):
        assert runner.invoke(app, ["describe", "trace/order-cancel-v0", "--json"]).exit_code == 0
