"""``trace-envs rollout``: runs, resumes, validates its options, prints the summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.cli.rollout import parse_seeds
from trace_envs.llm.fake_server import FakeModelServer, order_cancel_agent
from trace_envs.rollout import load_episodes

ENV_ID = "trace/order-cancel-v0"


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
    result = CliRunner().invoke(
        build_app(), ["rollout", "-e", ENV_ID, "-n", "2", "-o", str(tmp_path / "x.jsonl"), "-p", "hf:/no/such/model",
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
        (["-e", ENV_ID, "-p", "flawed:precondition_verfication"], "unknown capability in --policy"),
    ],
)
def test_bad_options_are_named(tmp_path: Path, args: list[str], needle: str) -> None:
    result = CliRunner().invoke(build_app(), ["rollout", *args, "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2
    assert needle in " ".join(result.output.split())


def test_parse_seeds() -> None:
    assert parse_seeds("0-2,5,1") == [0, 1, 2, 5]
