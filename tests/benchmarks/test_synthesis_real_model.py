"""The real-model benchmark through the relay, end to end: a thread answers the relay's request files as a person
would (round 1 with no module, round 2 with a known-good one), the benchmark records the rounds, the gate that
stopped the failed one with its finding, seconds and tokens, and a rerun resumes without asking again."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.benchmarks.scripts import BENCHMARKS, load_benchmark
from tests.conftest import REPO_ROOT

KNOWN_GOOD = REPO_ROOT / "tests" / "synthesis" / "modules" / "retail_cancel.py"
CAPABILITY = "order_owner_check"


def _answer(folder: Path, stop: threading.Event) -> None:
    """Reply to each request file: no module first, then the known-good module under the asked capability."""
    module = KNOWN_GOOD.read_text(encoding="utf-8").replace('"precondition_verification"', f'"{CAPABILITY}"')
    answers = ["Sorry, I need more time to think about this env.", f"Here it is:\n\n```python\n{module}```\n"]
    while not stop.wait(0.2):
        for request in sorted((folder / "REQUESTS").glob("*.md")):
            reply = folder / "REPLIES" / request.name
            if not reply.exists():
                number = int(request.stem)
                temporary = reply.with_suffix(".tmp")
                temporary.write_text(answers[min(number, len(answers)) - 1], encoding="utf-8")
                temporary.replace(reply)


def test_relay_renders_and_numbers_each_request_once(tmp_path: Path) -> None:
    relay_endpoint = load_benchmark("relay_endpoint")
    relay = relay_endpoint.Relay(tmp_path)
    body = {
        "model": "relay",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    }
    assert relay.number_for(body) == 1
    assert relay.number_for(dict(body, temperature=0.3)) == 1  # a retry, other sampling: the same question
    assert relay.number_for({**body, "messages": body["messages"][:1]}) == 2
    text = (tmp_path / "REQUESTS" / "0001.md").read_text(encoding="utf-8")
    assert "## Message 1: system\n\nBe brief." in text and "## Message 2: user\n\nHi" in text
    assert "REPLIES/0001.md" in text
    assert relay_endpoint.Relay(tmp_path).number_for(body) == 1  # the numbering survives a restart


@pytest.mark.slow
def test_benchmark_through_the_relay_records_rounds_and_resumes(tmp_path: Path, shared_data: Path) -> None:
    relay_endpoint, benchmark = load_benchmark("relay_endpoint"), load_benchmark("synthesis_real_model")
    capabilities = tmp_path / "capabilities.json"
    entry = {
        "capability": CAPABILITY,
        "target": "retail",
        "description": "Check that the order belongs to the customer and may be cancelled before cancelling it.",
        "failure_patterns": ["The agent cancelled without reading the order (2x)"],
        "excerpts": ["Trajectory ep-000000000000 — outcome: FAILURE (reward 0.00)\nUSER: Cancel #W0000001."],
    }
    capabilities.write_text(json.dumps({"capabilities": [entry]}), encoding="utf-8")
    relay_dir, out = tmp_path / "relay", tmp_path / "run"
    server = relay_endpoint.serve(relay_endpoint.Relay(relay_dir, timeout_s=120, settle_s=0.0, poll_s=0.1))
    stop = threading.Event()
    threads = [threading.Thread(target=server.serve_forever, daemon=True)]
    threads.append(threading.Thread(target=_answer, args=(relay_dir, stop), daemon=True))
    for thread in threads:
        thread.start()
    spec = f"openai:http://127.0.0.1:{server.server_address[1]}/v1#relay"
    args = ["--model", spec, "--capabilities", str(capabilities), "--out", str(out), "--seeds", "10", "--fuzz", "3"]
    args += ["--data", str(shared_data / "tau2"), "--concurrency", "2"]
    try:
        assert benchmark.main(args) == 0
        assert benchmark.main(args) == 0  # resumed: nothing asked again
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
    assert sorted(p.name for p in (relay_dir / "REQUESTS").glob("*.md")) == ["0001.md", "0002.md"]
    repair = (relay_dir / "REQUESTS" / "0002.md").read_text(encoding="utf-8")
    assert "## Message 2: assistant\n\nSorry, I need more time" in repair  # the conversation, with roles
    (row,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["rows"]
    assert row["status"] == "passed" and row["rounds_to_pass"] == 2
    first, second = row["rounds"]
    assert first["stopped_by"] == "format" and "module" in first["first_finding"]
    assert second["passed"] and second["gate_seconds"] > 0
    assert row["input_tokens"] > 1000 and row["output_tokens"] > 100  # estimated by the relay
    table = (out / "results.md").read_text(encoding="utf-8")
    assert f"| {CAPABILITY} | retail | passed | 2 | round 1: format: " in table
    assert "Passed 1 of 1, 0 in round 1." in table
    assert (out / "envs" / f"{CAPABILITY}.py").is_file()


def test_the_benchmarks_capabilities_are_two_per_target_and_none_is_shipped() -> None:
    from trace_envs.registry.capabilities import capabilities

    requests = load_benchmark("synthesis_real_model").load_requests(
        BENCHMARKS / "data" / "real_model_capabilities.json"
    )
    targets = [request.target for request in requests]
    assert sorted(targets) == sorted(["retail", "airline", "device"] * 2)
    shipped = set(capabilities())
    assert not [r.capability for r in requests if r.capability in shipped], "a shipped env covers it"
    assert all(r.failure_patterns and r.excerpts for r in requests), "each carries analysis evidence"
