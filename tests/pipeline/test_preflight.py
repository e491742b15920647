"""The preflight checks what a run's stages need before anything is spent: each model's key and one cheap request
to its endpoint (the fake servers answer it), extras, data folders and disk space; ``pipeline --check`` prints
it as a table (exit 0/2), and a real run stops on it before the rollout (a missing analyst key included)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import free_port
from trace_envs.cli import build_app
from trace_envs.llm.fake_server import FakeModelServer
from trace_envs.pipeline import DEMO_YAML, PreflightFailed, load_config, preflight, run_pipeline

pytest.importorskip("anthropic")
pytest.importorskip("openai")

pytestmark = pytest.mark.usefixtures("no_api_keys")


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(api_key="right") as fake:
        yield fake


def write_config(tmp_path: Path, **sections: object) -> Path:
    data = yaml.safe_load(DEMO_YAML)
    for dotted, value in sections.items():
        section, _, field = dotted.partition("__")
        data[section] = {**data[section], field: value}
    path = tmp_path / "trace.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def model_config(tmp_path: Path, server: FakeModelServer) -> Path:
    """A config whose agent is an openai endpoint and whose analyst and generator are Anthropic models."""
    return write_config(
        tmp_path,
        rollout__policy=f"openai:{server.openai_url}#served",
        analyze__analyst="anthropic:claude-sonnet-4-6",
        synthesize__generator="anthropic:claude-sonnet-4-6",
    )


def rows(checks: list) -> dict[str, tuple[bool, str, str]]:  # type: ignore[type-arg]
    return {c.what: (c.ok, c.detail, c.fix) for c in checks}


def test_every_model_is_checked_with_one_cheap_request_and_nothing_is_spent(
    tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "right")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "right")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # the Anthropic models answer from the fake server too
    checks = preflight(load_config(model_config(tmp_path, server)), tmp_path / "out")
    found = rows(checks)
    assert all(ok for ok, _, _ in found.values()), found
    assert list(found)[:3] == ["rollout.policy", "analyze.analyst", "synthesize.generator"]
    assert "the endpoint answered" in found["rollout.policy"][1]
    assert {"train extra", "retail data", "train settings", "output folder"} <= set(found)
    assert server.requests == []  # only the model lists were asked: no chat request, no tokens


def test_a_missing_analyst_key_fails_before_the_rollout(tmp_path: Path, server: FakeModelServer) -> None:
    config = load_config(model_config(tmp_path, server))
    checks = preflight(config, tmp_path / "out", probe=False)
    ok, detail, fix = rows(checks)["analyze.analyst"]
    assert not ok and "$ANTHROPIC_API_KEY" in detail and fix == "export ANTHROPIC_API_KEY=<your key> before the run"
    assert rows(checks)["synthesize.generator"][2] == fix  # the fix names the variable (it stopped mid-sentence)
    with pytest.raises(PreflightFailed, match=r"analyze\.analyst: .*\$ANTHROPIC_API_KEY"):
        run_pipeline(config, tmp_path / "out")
    assert not (tmp_path / "out" / "rollout").exists()  # nothing ran
    report_only = preflight(config, tmp_path / "out", stages=("report",))
    assert [c.what for c in report_only] == ["output folder"]  # a stage is checked for what it needs only


def test_the_hosted_api_unresolved_blames_the_network_not_a_base_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No base URL is set, so "fix the host name in the base URL" was a wrong fix (no DNS here: a lookup fails)."""
    import socket

    def no_dns(*args: object, **kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "made-up")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    path = write_config(tmp_path, analyze__analyst="anthropic:claude-sonnet-4-6")
    ok, detail, fix = rows(preflight(load_config(path), tmp_path / "out", stages=("analyze",)))["analyze.analyst"]
    assert not ok and "cannot resolve host 'api.anthropic.com'" in detail
    assert "base URL" not in detail + fix and "network" in detail and fix == "check this machine's network and DNS"


def test_unreachable_endpoints_refused_keys_and_bad_folders_are_named_fast(
    tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    path = write_config(
        tmp_path,
        rollout__policy=f"openai:http://127.0.0.1:{free_port()}/v1#served",
        rollout__user_model="openai:http://no-such-host.invalid:8001/v1#served",
        evaluate__policies=["base", f"openai:{server.openai_url}#served"],
        train__model="./no-such-model",
    )
    data = yaml.safe_load(path.read_text())
    data["data"] = str(tmp_path / "no-data")
    path.write_text(yaml.safe_dump(data))
    start = time.monotonic()
    found = rows(preflight(load_config(path), tmp_path / "out", min_free_bytes=1 << 60))
    assert time.monotonic() - start < 20
    assert "connection refused by 127.0.0.1" in found["rollout.policy"][1]
    assert "cannot resolve host 'no-such-host.invalid'" in found["rollout.user_model"][1]
    assert found["rollout.user_model"][2] == "fix the host name in the base URL"
    assert found["rollout.policy"][2] == "start the model server, or fix the port in the base URL"
    assert "check the API key" in found["evaluate.policies"][1]
    assert not found["retail data"][0] and "fix data" in found["retail data"][2]
    assert not found["train.model"][0]
    assert not found["output folder"][0] and "GiB free" in found["output folder"][1]


def test_check_prints_the_table_and_exits_0_or_2(tmp_path: Path, server: FakeModelServer) -> None:
    offline = CliRunner().invoke(build_app(), ["pipeline", str(write_config(tmp_path)), "--check"])
    assert offline.exit_code == 0, offline.output
    assert "preflight" in offline.output and "output folder" in offline.output and "failed" not in offline.output
    assert not (tmp_path / "trace").exists()  # a check writes nothing
    bad = CliRunner().invoke(build_app(), ["pipeline", str(model_config(tmp_path, server)), "--check"])
    assert bad.exit_code == 2, bad.output
    text = " ".join(bad.output.replace("│", " ").split())
    assert "analyze.analyst failed" in text and "$ANTHROPIC_API_KEY" in text
    run = CliRunner().invoke(build_app(), ["pipeline", str(model_config(tmp_path, server)), "-o", str(tmp_path / "o")])
    assert run.exit_code == 2 and "preflight failed" in run.output and "Traceback" not in run.output
    assert not (tmp_path / "o").exists()


def test_failed_rollout_episodes_are_reported_with_their_first_causes(tmp_path: Path) -> None:
    from trace_envs.pipeline.data_stages import failure_line
    from trace_envs.rollout import EpisodeRecord

    def failed(seed: int, error: str) -> EpisodeRecord:
        return EpisodeRecord(env_id="trace/device-v0", seed=seed, policy="p", error=error, ended="error")

    records = [
        failed(0, "HostNotFound: cannot resolve host 'gpu-host'\ntrace"),
        failed(1, "HostNotFound: cannot resolve host 'gpu-host'\nx"),
    ]
    line = failure_line(tmp_path / "device.jsonl", 2, [*records, failed(5, "ValueError: bad")])
    assert (
        "2 episodes failed (trace/device-v0 seed 0 and 1 more: HostNotFound: cannot resolve host 'gpu-host'; " in line
    )
    assert "seed 5: ValueError: bad)" in line and "\n" not in line


def test_a_packaged_model_is_checked_for_the_gguf_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    data = yaml.safe_load(DEMO_YAML)
    data["train"]["model"] = "smollm2-135m-instruct"
    config = tmp_path / "trace.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    loaded = load_config(config)
    assert loaded.train.model == "smollm2-135m-instruct"  # a name, not a path next to the config
    checks = {c.what: c for c in preflight(loaded, tmp_path / "run")}
    assert checks["train.model"].ok and "built by make-model" in checks["train.model"].detail
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "gguf" else real_find_spec(name))
    missing = {c.what: c for c in preflight(loaded, tmp_path / "run")}["train.model"]
    assert not missing.ok and "trace-envs[train]" in missing.fix
