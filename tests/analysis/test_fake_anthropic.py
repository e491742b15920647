"""A full analysis against a local fake Anthropic endpoint (the real SDK on the wire) answering with
recorded analyst responses: live requests with a repair retry, resume after a failed job, and the
Message Batches path."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from trace_envs.analysis import AnalysisConfig, LabelStore, known_dictionary, run_analysis
from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest
from trace_envs.rollout.store import TrajectoryStore

from .fake_batches import FakeBatchServer
from .recorded import DATA, RUNS, answer_for, store_records

pytest.importorskip("anthropic")

SPEC = "anthropic:claude-sonnet-4-6"


class RecordedAnalyst:
    """Responder: the recorded answer to each prompt; one trajectory's first answer is broken (to be
    repaired); after ``fail_after`` labelling requests every request is rejected (a dying job)."""

    def __init__(self, recorded: dict[str, Any], broken: str, fail_after: int | None = None):
        self.recorded = recorded
        self.broken = broken
        self.fail_after = fail_after
        self.labelling = 0
        self.repairs = 0
        self.lock = threading.Lock()

    def __call__(self, request: FakeRequest) -> FakeReply:
        first = next(m for m in request.messages if m["role"] == "user")["content"]
        with self.lock:
            if "propose a dictionary" not in first:
                self.labelling += 1
                if self.fail_after is not None and self.labelling > self.fail_after:
                    return FakeReply(status=400, error="simulated outage")
            if len(request.messages) > 1 and request.messages[-2]["role"] == "assistant":
                self.repairs += 1
                return FakeReply(content=answer_for(first, self.recorded))
        if self.broken in first and "labelling pass 0" in first:
            return FakeReply(content='{"labels": [{"capability": "precondition_verification", "label": "MAYBE"}]}')
        return FakeReply(content=answer_for(first, self.recorded))


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(DATA.read_text())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "runs.jsonl"
    with TrajectoryStore(path, fsync=False) as writer:
        for record in store_records():
            writer.append(record)
    return path


def broken_episode() -> str:
    from trace_envs.analysis import episode_id

    return episode_id(store_records()[0])


def model_for(server: FakeModelServer) -> Any:
    from trace_envs.llm import RetryConfig, make_chat_model

    return make_chat_model(
        SPEC, base_url=server.url, api_key="test-key", prices={"input": 3.0, "output": 15.0},
        retry=RetryConfig(max_retries=0),
    )  # fmt: skip


def check_result(result: Any) -> None:
    assert result.dictionary.names == ["precondition_verification", "order_status_communication"]  # merged
    assert result.kept == ["precondition_verification"]
    summary = {s.capability: s for s in result.summary}
    assert summary["precondition_verification"].selected == RUNS
    assert summary["order_status_communication"].selected == 1  # only the noisy pass selects it
    assert not summary["order_status_communication"].kept
    agreement = {a.capability: a for a in result.agreement}
    assert agreement["precondition_verification"].accuracy == 1.0
    assert agreement["precondition_verification"].compared == RUNS * 16
    assert result.cost_usd > 0 and result.labelling_usage.input_tokens > 0
    assert len(result.labels) == RUNS * 16


def test_live_analysis_with_repair_and_report(store: Path, recorded: dict[str, Any], tmp_path: Path) -> None:
    analyst = RecordedAnalyst(recorded, broken_episode())
    with FakeModelServer(analyst, api_key="test-key") as server:
        config = AnalysisConfig(analyst=SPEC, runs=RUNS, concurrency=4)
        result = run_analysis(store, config, tmp_path / "out", analyst=model_for(server))
        check_result(result)
        assert analyst.repairs == 1
        assert len(server.requests) == 1 + RUNS * 16 + 1  # discovery, labels, one repair
        again = run_analysis(store, config, tmp_path / "out", analyst=model_for(server))
        assert len(server.requests) == 1 + RUNS * 16 + 1  # nothing asked twice
        assert again.kept == result.kept
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Agreement with the offline probes" in report and "$" in report


def test_a_failed_job_resumes_without_asking_again(store: Path, recorded: dict[str, Any], tmp_path: Path) -> None:
    from trace_envs.llm import LLMError

    config = AnalysisConfig(analyst=SPEC, runs=RUNS, concurrency=1)
    dying = RecordedAnalyst(recorded, "no-such-episode", fail_after=20)
    with FakeModelServer(dying, api_key="test-key") as server, pytest.raises(LLMError):
        run_analysis(store, config, tmp_path / "out", analyst=model_for(server))
    done = len(LabelStore(tmp_path / "out" / "labels.jsonl").load())
    assert done == 20
    healthy = RecordedAnalyst(recorded, "no-such-episode")
    with FakeModelServer(healthy, api_key="test-key") as server:
        result = run_analysis(store, config, tmp_path / "out", analyst=model_for(server))
        assert len(server.requests) == RUNS * 16 - done  # discovery was kept, only missing labels asked
    check_result(result)


def test_message_batches_path(store: Path, recorded: dict[str, Any], tmp_path: Path) -> None:
    analyst = RecordedAnalyst(recorded, broken_episode())
    with FakeBatchServer(analyst, api_key="test-key", polls_before_end=2) as server:
        config = AnalysisConfig(analyst=SPEC, runs=RUNS, batch=True)
        result = run_analysis(store, config, tmp_path / "out", analyst=model_for(server), poll_s=0.01)
        check_result(result)
        assert len(server.batches) == 1
        (batch,) = server.batches.values()
        assert len(batch["requests"]) == RUNS * 16
        assert all(r["params"]["model"] == "claude-sonnet-4-6" for r in batch["requests"])
        assert len(server.requests) == 1 + 1  # live requests: discovery and the one repair
        assert not (tmp_path / "out" / "batch.json").exists()


def test_a_killed_batch_job_picks_up_the_same_batch(store: Path, recorded: dict[str, Any], tmp_path: Path) -> None:
    from trace_envs.analysis.batches import label_with_batches
    from trace_envs.analysis.runner import load_records

    records = load_records(store)
    labels = LabelStore(tmp_path / "labels.jsonl")
    state = tmp_path / "batch.json"
    analyst = RecordedAnalyst(recorded, "no-such-episode")
    dictionary = known_dictionary().model_copy(
        update={"capabilities": [c for c in known_dictionary().capabilities if c.name == "precondition_verification"]}
    )
    with FakeBatchServer(analyst, api_key="test-key", polls_before_end=10_000) as server:
        model = model_for(server)

        async def killed() -> None:
            task = label_with_batches(model, records, dictionary, labels, state, runs=1, poll_s=0.01)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(task, timeout=0.5)

        asyncio.run(killed())
        assert state.exists() and not labels.load()
        server.polls_before_end = 0

        async def resumed() -> None:
            await label_with_batches(model, records, dictionary, labels, state, runs=1, poll_s=0.01)

        asyncio.run(resumed())
        assert len(server.batches) == 1  # the same batch, not a second one
        assert len(labels.load()) == 16 and not state.exists()
