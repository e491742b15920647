"""``trace-envs rollout``: runs, resumes, validates its options, prints the summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.cli.rollout import parse_seeds
from trace_envs.llm.fake_server import FakeModelServer, order_cancel_agent
from trace_envs.rollout import load_episodes

from .user_envs import BROKEN_ID, CAPABILITY_ID, ECHO_ID

ENV_ID = "trace/order-cancel-v0"
USER_MODULE = "tests.cli.user_envs"
REPO_ROOT = Path(__file__).resolve().parents[2]


def one_line(output: str) -> str:
    """The output with Rich's line wrapping and box borders taken out."""
    return " ".join(output.replace("│", " ").split())


def invoke(*args: str) -> object:
    return CliRunner().invoke(build_app(), ["rollout", *args], catch_exceptions=False)


def test_rollout_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "x.jsonl"
    first = invoke("--env", ENV_ID, "--policy", "oracle", "--episodes", "4", "--out", str(out))
    assert first.exit_code == 0, first.output
    assert "100.0%" in first.output and "pass rate" in first.output
    second = invoke("-e", ENV_ID, "-p", "oracle", "-n", "6", "-o", str(out), "--concurrency", "2")
    assert second.exit_code == 0, second.output
    assert "4 finished earlier" in second.output and "this run: 2 episodes" in second.output
    assert sorted(r.seed for r in load_episodes(out)) == list(range(6))


def test_rollout_in_worker_processes(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = invoke("-e", ENV_ID, "-n", "6", "-o", str(out), "--workers", "2", "--option", "distractor_orders=1")
    assert result.exit_code == 0, result.output
    assert "this run: 6 episodes (0 failed" in result.output and "100.0%" in result.output
    records = load_episodes(out)
    assert sorted(r.seed for r in records) == list(range(6))
    assert all(r.metadata["env_kwargs"] == {"distractor_orders": 1} for r in records)


def test_a_failing_worker_stops_the_cli_with_its_error(tmp_path: Path) -> None:
    not_a_model = tmp_path / "empty"  # a folder that exists (a missing one is refused before any worker starts)
    not_a_model.mkdir()
    result = CliRunner().invoke(
        build_app(), ["rollout", "-e", ENV_ID, "-n", "2", "-o", str(tmp_path / "x.jsonl"), "-p", f"hf:{not_a_model}",
                      "--workers", "2"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "rollout stopped" in result.output and "cannot load a model" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_model_policy_with_seeds_and_options(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    with FakeModelServer(order_cancel_agent) as server:
        result = invoke(
            "-e", ENV_ID, "-p", f"openai:{server.openai_url}#agent", "--seeds", "3-4,9", "-o", str(out),
            "--option", "distractor_orders=1", "--temperature", "0", "--max-tokens", "64", "--no-cache",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.requests[0].body["temperature"] == 0 and server.requests[0].body["max_tokens"] == 64
    records = load_episodes(out)
    assert sorted(r.seed for r in records) == [3, 4, 9]
    assert all(r.success and r.metadata["env_kwargs"] == {"distractor_orders": 1} for r in records)
    assert "tokens" in result.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-e", "trace/nope-v0"], "not a registered env"),
        (["-e", ENV_ID, "-p", "oracel"], "unknown policy spec"),
        (["-e", ENV_ID, "--seeds", "a-b"], "expected seeds"),
        (["-e", ENV_ID, "-p", "flawed:bogus"], "Invalid value for --policy: unknown capability 'bogus'"),
        (["-e", ENV_ID, "--user-model", "vertex:x"], "Invalid value for --user-model: model spec 'vertex:x'"),
    ],
)
def test_bad_options_are_named(tmp_path: Path, args: list[str], needle: str) -> None:
    result = CliRunner().invoke(build_app(), ["rollout", *args, "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2
    assert needle in " ".join(result.output.split())


def test_parse_seeds() -> None:
    assert parse_seeds("0-2,5,1") == [0, 1, 2, 5]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_missing_api_key_is_one_usage_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    out = tmp_path / "x.jsonl"
    result = CliRunner().invoke(
        build_app(), ["rollout", "-e", ENV_ID, "-n", "2", "-o", str(out), "-p", "anthropic:claude-sonnet-4-6",
                      "--workers", workers],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "$ANTHROPIC_API_KEY" in one_line(result.output) and "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("distractor_orders=abc", "distractor_orders='abc': Input should be a valid integer"),
        ("distractor_orders=-1", "distractor_orders=-1: Input should be greater than or equal to 0"),
        ("bogus=1", "bogus=1: Extra inputs are not permitted"),
    ],
)
def test_a_bad_option_value_is_one_error_and_writes_nothing(tmp_path: Path, option: str, needle: str) -> None:
    out = tmp_path / "x.jsonl"
    result = CliRunner().invoke(build_app(), ["rollout", "-e", ENV_ID, "-n", "2", "-o", str(out), "--option", option])
    assert result.exit_code == 2, result.output
    assert needle in one_line(result.output) and "Its knobs: distractor_orders" in one_line(result.output)
    assert "Traceback" not in result.output
    assert not out.exists()


def test_dash_o_is_the_output_and_a_key_value_there_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(build_app(), ["rollout", "-e", ENV_ID, "-n", "2", "-o", "distractor_orders=1"])
    assert result.exit_code == 2, result.output
    assert "env options go in --option KEY=VALUE" in one_line(result.output)
    assert list(tmp_path.iterdir()) == []


def test_every_episode_failing_exits_non_zero_with_the_first_errors(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = CliRunner().invoke(
        build_app(), ["rollout", "-e", BROKEN_ID, "--import", USER_MODULE, "-p", "noop", "-n", "3", "-o", str(out)]
    )
    assert result.exit_code == 1, result.output
    text = one_line(result.output)
    assert f"{BROKEN_ID} seed 0 and 2 more: RuntimeError: the broken env's step always fails" in text
    assert "every episode of this run failed" in text and "Traceback" not in result.output


def test_some_failures_are_shown_but_the_run_succeeds(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = CliRunner().invoke(
        build_app(),
        ["rollout", "-e", ECHO_ID, "-e", BROKEN_ID, "--import", USER_MODULE, "-p", "noop", "-n", "2", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "2 episodes failed; first errors:" in one_line(result.output)
    assert sorted((r.env_id, r.seed, r.error is None) for r in load_episodes(out, include_failed=True)) == [
        (BROKEN_ID, 0, False), (BROKEN_ID, 1, False), (ECHO_ID, 0, True), (ECHO_ID, 1, True),
    ]  # fmt: skip


@pytest.mark.parametrize("workers", ["1", "2"])
def test_envs_of_your_own_by_module_prefix_or_import(tmp_path: Path, workers: str) -> None:
    out = tmp_path / "x.jsonl"
    echo = invoke("-e", f"{USER_MODULE}:{ECHO_ID}", "-p", "noop", "-n", "4", "-o", str(out), "-w", workers)
    assert echo.exit_code == 0, echo.output
    careful = invoke(
        "-e", CAPABILITY_ID, "--import", USER_MODULE, "-p", "flawed:careful_cancelling", "-n", "8", "-o", str(out),
        "-w", workers,
    )  # fmt: skip
    assert careful.exit_code == 0, careful.output
    records = load_episodes(out, include_failed=True)
    assert sorted((r.env_id, r.seed, r.policy) for r in records) == sorted(
        [(ECHO_ID, s, "noop") for s in range(4)] + [(CAPABILITY_ID, s, "flawed:careful_cancelling") for s in range(8)]
    )
    assert all(r.error is None for r in records)
    assert all(r.success for r in records if r.env_id == ECHO_ID)
    flawed = [r for r in records if r.env_id == CAPABILITY_ID]
    assert 0 < sum(r.success for r in flawed) < len(flawed)  # the flawed solution of the user's own capability


def test_ctrl_c_stops_a_scripted_rollout_and_a_rerun_finishes_the_rest(tmp_path: Path) -> None:
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    total = 150
    out = tmp_path / "x.jsonl"
    args = ["-e", ECHO_ID, "--import", USER_MODULE, "-p", "noop", "-n", str(total), "-o", str(out),
            "--option", "step_delay_s=0.01"]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "trace_envs.cli", "rollout", *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
        # a runner started in the background of a shell without job control ignores SIGINT, and its children
        # inherit that: Python then installs no KeyboardInterrupt handler. Ctrl-C is what is tested, so the
        # child starts with SIGINT's default disposition whoever runs the suite.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not (out.exists() and out.read_bytes().count(b"\n") >= 3):
            assert process.poll() is None and time.monotonic() < deadline, "the rollout ended before any episode"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = output.decode()
    assert process.returncode == 130, text
    assert "interrupted:" in text and "rerun the same command" in one_line(text) and "Traceback" not in text
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line)["env_id"] == ECHO_ID for line in lines[:-1])
    stopped_at = len(lines) - 1
    assert 3 <= stopped_at < total

    rerun = invoke(*args)
    assert rerun.exit_code == 0, rerun.output
    assert f"{stopped_at} finished earlier" in one_line(rerun.output)
    seeds = [r.seed for r in load_episodes(out)]
    assert sorted(seeds) == list(range(total))  # each episode exactly once


def test_an_unreachable_model_fails_every_episode_at_once_with_its_cause(tmp_path: Path) -> None:
    """No retries, no "raise timeout_s": the store records a refused connection as such, and the console says it."""
    import time

    from tests.conftest import free_port

    pytest.importorskip("openai")
    port = free_port()
    out = tmp_path / "x.jsonl"
    start = time.monotonic()
    result = invoke("-e", ENV_ID, "-n", "3", "-o", str(out), "-p", f"openai:http://127.0.0.1:{port}/v1#m")
    assert time.monotonic() - start < 30
    assert result.exit_code == 1
    text = one_line(result.output)
    assert f"{ENV_ID} seed 0 and 2 more: ConnectionRefused:" in text and f"refused by 127.0.0.1:{port}" in text
    errors = [r.error or "" for r in load_episodes(out, include_failed=True)]
    assert len(errors) == 3 and all("ConnectionRefused" in e and "timeout_s" not in e for e in errors)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_missing_local_model_folder_is_bad_input_naming_the_folder(tmp_path: Path, workers: str) -> None:
    """Not transformers' "Repo id must use alphanumeric chars" (the answer `train --model` already gave right)."""
    pytest.importorskip("transformers")
    out = tmp_path / "x.jsonl"
    result = invoke("-e", ENV_ID, "-n", "1", "-o", str(out), "-p", "hf:./nope", "-w", workers)
    text = one_line(result.output)
    assert result.exit_code == 2 and "no model directory './nope'" in text and "Repo id" not in text
    assert not out.exists()
