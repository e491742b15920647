"""Every command that builds a model client fails the same way on a setup problem: a missing API key, an
endpoint that cannot be reached, is one line naming the fix, exit code 2, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import free_port
from trace_envs.cli import build_app

pytest.importorskip("anthropic")
pytest.importorskip("openai")

ENV_ID = "trace/order-cancel-v0"
ANALYST = "anthropic:claude-sonnet-4-6"


pytestmark = pytest.mark.usefixtures("no_api_keys")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "runs.jsonl"
    result = CliRunner().invoke(build_app(), ["rollout", "-e", ENV_ID, "-p", "flawed", "-n", "4", "-o", str(path)])
    assert result.exit_code == 0, result.output
    return path


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(build_app(), list(args))


def assert_one_line(result, command: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"trace-envs {command}: "), result.output
    assert needle in lines[0] and "Traceback" not in result.output


def test_analyze_without_a_key(store: Path, tmp_path: Path) -> None:
    result = invoke("analyze", str(store), "--analyst", ANALYST, "-o", str(tmp_path / "a"))
    assert_one_line(result, "analyze", "set $ANTHROPIC_API_KEY")
    assert not (tmp_path / "a").exists()


def test_rollout_and_play_without_a_key_take_the_same_path(tmp_path: Path) -> None:
    rollout = invoke("rollout", "-e", ENV_ID, "-n", "2", "-o", str(tmp_path / "x.jsonl"), "-p", ANALYST)
    assert_one_line(rollout, "rollout", "set $ANTHROPIC_API_KEY")
    assert_one_line(invoke("play", ENV_ID, "-p", ANALYST), "play", "set $ANTHROPIC_API_KEY")


def test_pipeline_without_the_analyst_key_stops_before_the_rollout(tmp_path: Path) -> None:
    from trace_envs.pipeline import DEMO_YAML

    config = tmp_path / "trace.yaml"
    config.write_text(DEMO_YAML.replace("analyst: probes", f"analyst: {ANALYST}"), encoding="utf-8")
    assert f"analyst: {ANALYST}" in config.read_text()
    result = invoke("pipeline", str(config), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and "$ANTHROPIC_API_KEY" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_an_unreachable_analyst_is_named_at_once(store: Path, tmp_path: Path) -> None:
    port = free_port()
    result = invoke("analyze", str(store), "--analyst", f"openai:http://127.0.0.1:{port}/v1#m", "-o", str(tmp_path))
    assert result.exit_code == 2 and f"connection refused by 127.0.0.1:{port}" in " ".join(result.output.split())
    assert "timeout_s" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("evaluate", ["evaluate", "-t", "device", "-p", ANALYST, "-o", "OUT"]),
        ("evaluate", ["evaluate", "-t", "device", "-p", "oracle", "-p", f"m={ANALYST}", "-o", "OUT"]),
        (
            "baseline gepa",
            ["baseline", "gepa", "-e", ENV_ID, "--policy", ANALYST, "--budget", "100", "--reflection-model", ANALYST,
             "-o", "OUT"],
        ),
    ],
)  # fmt: skip
def test_evaluate_and_gepa_without_a_key_take_the_same_path(command: str, args: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(*[str(out) if arg == "OUT" else arg for arg in args])
    assert_one_line(result, command, "set $ANTHROPIC_API_KEY")
    assert not out.exists()


def test_an_error_line_is_never_wrapped_inside_a_path(tmp_path: Path) -> None:
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "missing-module.py"
    result = CliRunner().invoke(build_app(), ["validate", str(deep)], env={"COLUMNS": "80"})
    assert result.exit_code == 2
    assert str(deep) in result.output, result.output
