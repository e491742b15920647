"""Fixtures for the synthesis tests: red-team sources with their placeholders filled, a canary file, a
local TCP listener, a fake home directory, and gate contexts."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from trace_envs.synthesis import GateContext, SandboxLimits
from trace_envs.targets.tau2.data import load_domain_data

from ..conftest import shared_dir

HERE = Path(__file__).parent
REDTEAM = HERE / "redteam"
GOOD_MODULE = HERE / "modules" / "retail_cancel.py"
REPLIES = HERE / "data" / "replies"
"""Recorded generator replies: a correct module, and the same with a defect (global RNG) to repair."""
CAPABILITY = "precondition_verification"
TAU2_DATA = shared_dir() / "data" / "tau2"


def sandbox_and_tau2_missing(platform: str = sys.platform, data: Path = TAU2_DATA) -> list[str]:
    """What a test that runs modules in the sandbox on tau2 data lacks here, each naming where it looked and
    the fix (empty when nothing is missing)."""
    missing = []
    if not platform.startswith("linux"):
        missing.append(f"the sandbox needs Linux, this is {platform}")
    if not data.is_dir():
        missing.append(f"no tau2 data at {data}: put shared/ beside the checkout or set TRACE_ENVS_SHARED")
    return missing


def needs_sandbox_and_tau2() -> pytest.MarkDecorator:
    """Skip (naming what is missing) unless the sandbox and the tau2 data are both here."""
    missing = sandbox_and_tau2_missing()
    return pytest.mark.skipif(bool(missing), reason="; ".join(missing) or "nothing missing")


def redteam_source(name: str, **values: str) -> str:
    """A red-team module's text with ``__KEY__`` placeholders replaced by ``values``."""
    text = (REDTEAM / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"__{key.upper()}__", value)
    return text


def make_context(name: str = "<module>", *, wall: float = 60.0, **overrides: object) -> GateContext:
    """A small, fast context for the retail target (5 fixed and 2 drawn seeds, 10 Hypothesis examples)."""
    settings: dict[str, object] = {
        "target": "retail",
        "capability": CAPABILITY,
        "seeds": 5,
        "drawn_seeds": 2,
        "draw_seed": 30,  # fixed, so each test plays the same seeds (use draws a fresh one per run)
        "fuzz_examples": 10,
        "data": TAU2_DATA if TAU2_DATA.is_dir() else None,
        "filename": name,
        "limits": SandboxLimits(wall_seconds=wall),
    }
    settings.update(overrides)
    return GateContext(**settings)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def analysis_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """analysis.json of an offline (probes) analysis that keeps precondition_verification, with its store."""
    from trace_envs.analysis import AnalysisConfig, run_analysis
    from trace_envs.rollout.store import TrajectoryStore

    from ..analysis.recorded import store_records

    folder = tmp_path_factory.mktemp("analysis")
    with TrajectoryStore(folder / "runs.jsonl", fsync=False) as store:
        for record in store_records():
            store.append(record)
    result = run_analysis(folder / "runs.jsonl", AnalysisConfig(analyst="probes", runs=2), folder, report=False)
    assert result.kept == [CAPABILITY]
    return folder / "analysis.json"


@pytest.fixture
def tau2_data() -> Path:
    if not TAU2_DATA.is_dir():
        pytest.skip(f"tau2 data not found at {TAU2_DATA}: put shared/ beside the checkout or set TRACE_ENVS_SHARED")
    return TAU2_DATA


@pytest.fixture(scope="session")
def leaked() -> dict[str, str]:
    """An order id and an instruction sentence of a real retail evaluation task and the user id of task 10 (issue
    34's leak; read, never stored); placeholders that no gate will reach when the data is absent."""
    if not TAU2_DATA.is_dir():
        return {
            "leaked_id": "#W0000000", "leaked_id_reversed": "0000000W#", "leaked_sentence": "no data",
            "leaked_user_reversed": "0000_on",
        }  # fmt: skip
    data = load_domain_data(TAU2_DATA, "retail")
    user_id = next(a.arguments["user_id"] for a in data.task("10").gold_actions if "user_id" in a.arguments)
    task = data.task("0")
    order_id = next(a.arguments["order_id"] for a in task.gold_actions if "order_id" in a.arguments)
    instructions = task.user_scenario.instructions
    assert not isinstance(instructions, str)
    sentence = instructions.reason_for_call.split(". ")[0].replace(order_id, "my order")
    return {
        "leaked_id": order_id, "leaked_id_reversed": order_id[::-1], "leaked_sentence": sentence.replace('"', "'"),
        "leaked_user_reversed": user_id[::-1],
    }  # fmt: skip


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file outside any sandbox scratch directory that hostile modules try to overwrite."""
    path = tmp_path / "canary.txt"
    path.write_text("original", encoding="utf-8")
    return path


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$HOME pointed at a directory holding a fake SSH key, and an API key in our environment."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("FAKE-PRIVATE-KEY-7c1e", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary-5b2d")
    return home


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.1)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.server.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    try:
        yield server
    finally:
        server.close()
