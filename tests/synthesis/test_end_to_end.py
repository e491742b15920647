"""The whole loop offline: `trace-envs synthesize` against the local fake Anthropic endpoint serving a recorded
reply writes a module that passes every gate; it registers through $TRACE_ENVS_PATH and `trace-envs train`
runs 2 GRPO steps on it with the tiny model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trace_envs.llm.fake_server import FakeModelServer
from trace_envs.registry.sources import PATH_VARIABLE

from .conftest import CAPABILITY, TAU2_DATA, needs_sandbox_and_tau2
from .test_synthesize import KEY, SPEC, RecordedGenerator

pytest.importorskip("anthropic")
pytest.importorskip("trl")
pytestmark = [
    pytest.mark.train,
    pytest.mark.slow,
    needs_sandbox_and_tau2(),
]
ENV_ID = "trace/precondition-verification-v0"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


def test_synthesize_register_and_train(
    analysis_file: Path, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from trace_envs.cli import build_app
    from trace_envs.training import load_metadata

    out = tmp_path / "envs"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeModelServer(RecordedGenerator("correct"), api_key=KEY) as server:
        result = CliRunner().invoke(
            build_app(),
            [
                "synthesize", str(analysis_file), "-t", "retail", "-g", SPEC, "-o", str(out), "--base-url", server.url,
                "--seeds", "5", "--fuzz-examples", "10", "--data", str(TAU2_DATA), "-j", "1",
            ],
        )  # fmt: skip
        assert len(server.requests) == 1
    assert result.exit_code == 0, result.output
    assert (out / f"{CAPABILITY}.py").exists() and (out / "manifest.json").exists()
    assert "passed" in result.output and "synthesis for retail" in result.output

    adapter = tmp_path / "adapter"
    config = tmp_path / "grpo.yaml"
    config.write_text("num_seeds: 4\nmax_completion_length: 48\n", encoding="utf-8")
    trained = subprocess.run(
        [
            sys.executable, "-m", "trace_envs.cli", "train", "-e", ENV_ID, "--model", str(tiny_model), "-o",
            str(adapter), "--max-steps", "2", "--num-generations", "2", "--batch-size", "2", "--config", str(config),
        ],
        capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, PATH_VARIABLE: str(out), "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert trained.returncode == 0, trained.stdout[-3000:] + trained.stderr[-3000:]
    meta = load_metadata(adapter)
    assert meta.status == "complete" and meta.steps_done == 2
    assert meta.capability == CAPABILITY and meta.env_ids == [ENV_ID]
