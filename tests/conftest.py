"""Shared fixtures: where ../shared (benchmark data beside the checkout) is, or a clear skip."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parents[1]

# Tests never assert timings: on a loaded 2-core CI machine Hypothesis's deadline and "too slow"
# health check would fail tests for the machine's speed, not the code's behaviour.
settings.register_profile("trace-envs", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("trace-envs")

# Spot checks and validation play a boxed env's paced episodes at a model's pace (seconds per action by default);
# the suite plays them at a few milliseconds, so the paced path runs everywhere at no cost. A test of pacing
# itself sets its own pace (monkeypatch.setenv(PACE_VARIABLE, ...)).
os.environ.setdefault("TRACE_ENVS_PACE", "0.001,0.003")


def free_port() -> int:
    """A port on 127.0.0.1 with nothing listening (bound by the OS, then released): a connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def no_api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key and no base-URL override in the environment: hosted models then need a key."""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def shared_dir() -> Path:
    """``$TRACE_ENVS_SHARED`` if set, else ``../shared`` beside the checkout."""
    return Path(os.environ.get("TRACE_ENVS_SHARED", REPO_ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (benchmark data files); skips the test with the reason if it is absent."""
    path = shared_dir() / "data"
    if not path.is_dir():
        pytest.skip(
            f"benchmark data not found at {path}: put the shared/ folder beside the checkout or set TRACE_ENVS_SHARED"
        )
    return path


@pytest.fixture(scope="session")
def shared_reference() -> Path:
    path = shared_dir() / "reference"
    if not path.is_dir():
        pytest.skip(f"reference folder not found at {path}")
    return path


def vouching_entry(name: str, source: str, **fields: object) -> dict[str, object]:
    """A ``manifest.json`` module entry vouching for ``source`` as ``trace-envs synthesize`` writes one (the id the
    text names, a hand-written generator, no gates), with ``fields`` overriding any of it."""
    import ast
    import hashlib

    from trace_envs.registry.manifest import ModuleEntry
    from trace_envs.synthesis.gates.env_identity import source_env_id

    entry = {
        "module": name,
        "env_id": source_env_id(ast.parse(source)) or "trace/unnamed-v0",
        "capability": name.removesuffix(".py"),
        "target": "retail",
        "generator": "hand-written",
        "gates": [],
        "source_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        **fields,
    }
    return ModuleEntry.model_validate(entry).model_dump(mode="json")


def temp_names() -> set[str]:
    """The names in the host's temporary folder now, for :func:`grown_temp_files`."""
    return {path.name for path in Path(tempfile.gettempdir()).iterdir()}


def grown_temp_files(before: set[str]) -> list[Path]:
    """Plain files over 64 KiB that appeared in the temporary folder since ``before``: where a box's flooded
    output would land on the host. Other test workers' boxes come and go there, so a new name alone proves nothing."""
    grown = []
    for path in Path(tempfile.gettempdir()).iterdir():
        try:
            if path.name not in before and path.is_file() and path.stat().st_size > 2**16:
                grown.append(path)
        except OSError:  # gone already
            continue
    return grown
