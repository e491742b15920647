"""The synthesis loop offline, against the local fake Anthropic endpoint serving recorded generator replies:
repair in round 2, deduplicated repair reports, rejection, kill and resume, and the catalogue generator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest
from trace_envs.synthesis import SynthesisSettings, read_manifest, synthesize
from trace_envs.synthesis.generation.prompt import prompt_hash

from .conftest import CAPABILITY, REPLIES, TAU2_DATA, needs_sandbox_and_tau2

pytest.importorskip("anthropic")
pytestmark = needs_sandbox_and_tau2()

SPEC = "anthropic:claude-sonnet-4-6"
KEY = "test-key"


class RecordedGenerator:
    """Responder: the recorded replies in order, one per request (the last one again after that)."""

    def __init__(self, *names: str):
        self.replies = [(REPLIES / f"{name}.md").read_text(encoding="utf-8") for name in names]
        self.served = 0
        self.lock = threading.Lock()

    def __call__(self, request: FakeRequest) -> FakeReply:
        with self.lock:
            text = self.replies[min(self.served, len(self.replies) - 1)]
            self.served += 1
        return FakeReply(content=text)


def settings(rounds: int = 3) -> SynthesisSettings:
    return SynthesisSettings(rounds=rounds, seeds=5, fuzz_examples=10, data=TAU2_DATA)


def run(server: FakeModelServer, out: Path, analysis: Path, rounds: int = 3):  # type: ignore[no-untyped-def]
    return synthesize(
        CAPABILITY, "retail", SPEC, out=out, analysis=analysis, settings=settings(rounds),
        base_url=server.url, api_key=KEY,
    )  # fmt: skip


def test_a_faulty_reply_then_its_repair_passes_in_round_2(analysis_file: Path, tmp_path: Path) -> None:
    with FakeModelServer(RecordedGenerator("faulty", "correct"), api_key=KEY) as server:
        result = run(server, tmp_path / "envs", analysis_file)
        requests = list(server.requests)
    assert result.status == "passed", result.report.table() if result.report else result.reason
    assert result.attempts == 2 and result.env_id == "trace/precondition-verification-v0"
    # round 2's request is the conversation: prompt, the faulty reply, and the gate report of it
    first, second = requests
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    repair = second.messages[-1]["content"]
    assert "rejected by the static_policy gate" in repair and "random.choice" in repair and "Fix:" in repair
    assert second.messages[1]["content"] == (REPLIES / "faulty.md").read_text(encoding="utf-8")
    # the module and the manifest
    module = tmp_path / "envs" / f"{CAPABILITY}.py"
    source = module.read_text(encoding="utf-8")
    assert "class PendingOrderCancelEnv" in source and "```" not in source
    manifest = read_manifest(tmp_path / "envs")
    assert manifest is not None
    entry = manifest.modules[module.name]
    assert entry.generator == SPEC and entry.attempts == 2 and entry.target == "retail"
    assert entry.prompt_sha256 == prompt_hash(first.messages[0]["content"])
    assert entry.source_sha256 == prompt_hash(source)
    assert entry.cost_usd > 0 and entry.usage.input_tokens > 0 and entry.cost_usd == result.cost_usd
    assert [g.gate for g in entry.gates][:2] == ["format", "parse"] and all(g.status == "passed" for g in entry.gates)
    # every attempt is on disk: prompt, response, report and cost
    rounds = tmp_path / "envs" / "attempts" / CAPABILITY
    for number, stopped in ((1, "static_policy"), (2, None)):
        folder = rounds / f"round-{number}"
        assert {p.name for p in folder.iterdir()} >= {"prompt.json", "response.md", "generation.json", "report.json"}
        assert json.loads((folder / "report.json").read_text())["stopped_by"] == stopped
        assert json.loads((folder / "generation.json").read_text())["usage"]["cost_usd"] > 0


def test_reports_are_deduplicated_and_a_module_that_never_passes_is_rejected(
    analysis_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "envs"
    with FakeModelServer(RecordedGenerator("faulty"), api_key=KEY) as server:
        result = run(server, out, analysis_file, rounds=3)
        requests = list(server.requests)
    assert result.status == "rejected" and result.attempts == 3 and result.stopped_by == "static_policy"
    assert "rejected by static_policy after 3 attempt(s)" in result.reason
    second, third = requests[1].messages[-1]["content"], requests[2].messages[-1]["content"]
    assert "Findings:" in second and "Still not fixed" not in second
    assert "Findings:" not in third and "Still not fixed" in third and "random.choice" in third
    assert not (out / f"{CAPABILITY}.py").exists()  # never written, so never registered
    manifest = read_manifest(out)
    assert manifest is not None and not manifest.modules
    rejection = manifest.rejected[CAPABILITY]
    assert rejection.attempts == 3 and rejection.stopped_by == "static_policy"
    assert any("random.choice" in f for f in rejection.findings) and rejection.cost_usd > 0


KILLED_RUN = """
import os, signal, sys
from pathlib import Path
from trace_envs.synthesis import SynthesisSettings, synthesize
import trace_envs.synthesis.generation.loop as loop

real = loop.validate_reply
def validate_then_die(reply, context):
    if "random.choice" not in reply:  # round 2's reply: killed while validating it
        os.kill(os.getpid(), signal.SIGKILL)
    return real(reply, context)
loop.validate_reply = validate_then_die
synthesize({capability!r}, "retail", {spec!r}, out=Path({out!r}), analysis=Path({analysis!r}),
           settings=SynthesisSettings(seeds=5, fuzz_examples=10, data=Path({tau2!r})),
           base_url={url!r}, api_key={key!r})
"""


def test_a_killed_run_resumes_without_asking_for_an_attempt_twice(analysis_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "envs"
    with FakeModelServer(RecordedGenerator("faulty", "correct"), api_key=KEY) as server:
        code = KILLED_RUN.format(
            capability=CAPABILITY, spec=SPEC, out=str(out), analysis=str(analysis_file), tau2=str(TAU2_DATA),
            url=server.url, key=KEY,
        )  # fmt: skip
        killed = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        assert killed.returncode == -9, killed.stderr[-2000:]
        rounds = out / "attempts" / CAPABILITY
        assert (rounds / "round-1" / "report.json").exists() and (rounds / "round-2" / "generation.json").exists()
        assert not (rounds / "round-2" / "report.json").exists() and not (out / f"{CAPABILITY}.py").exists()
        assert len(server.requests) == 2
        first_report = (rounds / "round-1" / "report.json").read_text()
        result = run(server, out, analysis_file)
        assert len(server.requests) == 2  # both replies were on disk: nothing asked again
    assert result.status == "passed" and result.attempts == 2
    assert (rounds / "round-1" / "report.json").read_text() == first_report  # not validated again
    assert result.cost_usd > 0  # the resumed result still counts what both attempts cost


def test_another_generator_cannot_resume_a_folder(analysis_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "envs"
    with FakeModelServer(RecordedGenerator("correct"), api_key=KEY) as server:
        assert run(server, out, analysis_file).status == "passed"
    with pytest.raises(ValueError, match="another generator"):
        synthesize(CAPABILITY, "retail", "catalogue", out=out, analysis=analysis_file, settings=settings())


def test_the_catalogue_reuses_a_shipped_env_through_the_same_gates(tmp_path: Path) -> None:
    result = synthesize(CAPABILITY, "retail", "catalogue", out=tmp_path, settings=settings())
    assert result.status == "passed" and result.attempts == 1 and result.cost_usd == 0
    assert any("no model was asked" in note for note in result.notes)
    assert result.report is not None and [r.gate for r in result.report.results][-1] == "capability"
    source = (tmp_path / f"{CAPABILITY}.py").read_text(encoding="utf-8")
    assert "from generated_envs.precondition import PreconditionEnv" in source and "domain = RETAIL" in source
    missing = synthesize("permission_error_recovery", "retail", "catalogue", out=tmp_path, settings=settings())
    assert missing.status == "rejected" and missing.reason.startswith("no catalogue env for permission_error_recovery")
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.modules[f"{CAPABILITY}.py"].generator == "catalogue"
    assert manifest.rejected["permission_error_recovery"].reason == missing.reason


def test_capabilities_run_in_parallel_and_an_endpoint_error_stops_only_its_own(
    analysis_file: Path, tmp_path: Path
) -> None:
    from trace_envs.analysis.runner import load_analysis
    from trace_envs.llm import RetryConfig
    from trace_envs.synthesis import SynthesisError, SynthesisResult, make_generator, synthesize_analysis

    correct = RecordedGenerator("correct")

    def responder(request: FakeRequest) -> FakeReply:
        if "Name: tool_calling_precision" in request.messages[0]["content"]:
            return FakeReply(status=400, error="simulated refusal")
        return correct(request)

    with FakeModelServer(responder, api_key=KEY) as server:
        generator = make_generator(SPEC, base_url=server.url, api_key=KEY, retry=RetryConfig(max_retries=0))
        outcomes = synthesize_analysis(
            load_analysis(analysis_file), "retail", generator, out=tmp_path, settings=settings(),
            capabilities=[CAPABILITY, "tool_calling_precision"], jobs=2, base=analysis_file.parent,
        )  # fmt: skip
    passed, failed = outcomes
    assert isinstance(passed, SynthesisResult) and passed.status == "passed"
    assert isinstance(failed, SynthesisError) and failed.capability == "tool_calling_precision"
    assert "simulated refusal" in failed.error
    manifest = read_manifest(tmp_path)
    assert manifest is not None and "tool_calling_precision" not in manifest.rejected  # not the module's fault


class HalfCarefulAgent:
    """Responder for the calibration policy (OpenAI wire): every other episode looks the order up and acts
    as the policy says, the others give up at once, so each group of samples is half solved."""

    def __init__(self) -> None:
        self.episodes = 0

    def __call__(self, request: FakeRequest) -> FakeReply:
        import re

        from trace_envs.core import ToolCall

        opening = next(m["content"] for m in request.messages if m["role"] == "user")
        order = re.search(r"#W\d+", opening).group(0)  # type: ignore[union-attr]
        results = [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]
        if not results:
            self.episodes += 1
            if self.episodes % 2 == 0:
                return FakeReply(content="Sorry, I cannot help with orders.")
            return FakeReply(tool_calls=[ToolCall(name="get_order_details", arguments={"order_id": order})])
        status = results[-1]["status"]
        if status == "pending":
            reason = "ordered by mistake" if "ordered by mistake" in opening else "no longer needed"
            cancel = ToolCall(name="cancel_pending_order", arguments={"order_id": order, "reason": reason})
            return FakeReply(tool_calls=[cancel])
        if status == "cancelled":
            return FakeReply(content=f"Order {order} is now cancelled.")
        return FakeReply(content=f"Order {order} is {status}, so it cannot be cancelled.")


def test_a_calibrated_module_records_its_statistics(analysis_file: Path, tmp_path: Path) -> None:
    from trace_envs.synthesis import CalibrationSettings

    with (
        FakeModelServer(RecordedGenerator("correct"), api_key=KEY) as generator,
        FakeModelServer(HalfCarefulAgent(), api_key=KEY) as agent,
    ):
        calibration = CalibrationSettings(
            policy=f"openai:{agent.openai_url}#base-model", seeds=2, samples=4, concurrency=1,
            model_options={"api_key": KEY},
        )  # fmt: skip
        result = synthesize(
            CAPABILITY, "retail", SPEC, out=tmp_path, analysis=analysis_file,
            settings=settings().model_copy(update={"calibration": calibration}), base_url=generator.url, api_key=KEY,
        )  # fmt: skip
    assert result.status == "passed", result.report.table() if result.report else result.reason
    assert result.report is not None and result.report.results[-1].gate == "calibration"
    manifest = read_manifest(tmp_path)
    assert manifest is not None
    stats = manifest.modules[f"{CAPABILITY}.py"].calibration
    assert stats is not None and stats["episodes"] == 8 and stats["mean_success"] == 0.5
    assert stats["informative_share"] == 1.0 and stats["pass_at"]["1"] == 0.5 and stats["pass_at"]["8"] is None
    episodes = tmp_path / "attempts" / CAPABILITY / "round-1" / "calibration.jsonl"
    assert len(episodes.read_text().splitlines()) == 8


def test_the_catalogue_prefers_the_env_built_for_transfer_over_a_starter() -> None:
    """Two shipped envs train precondition_verification on retail: the cross-target one is reused, not the
    guide's single-target starter."""
    from trace_envs.synthesis.generation.catalogue import catalogue_env
    from trace_envs.synthesis.generation.prompt import shipped_envs

    trained = [env_id for env_id, cls in shipped_envs("retail") if cls.capability.name == CAPABILITY]  # type: ignore[attr-defined]
    assert {"trace/precondition-v0", "trace/retail-order-cancel-v0"} <= set(trained)
    assert catalogue_env(CAPABILITY, "retail")[0] == "trace/precondition-v0"
