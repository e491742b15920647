"""The pipeline: order, stopping, skipped gates, reports, bad input; and the correct module passes all."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from trace_envs.box.layers import REQUIRED, missing_layers
from trace_envs.synthesis import (
    Gate,
    GateContext,
    GateResult,
    default_gates,
    named_gate,
    validate_file,
    validate_source,
)

from .conftest import GOOD_MODULE, make_context


def test_gates_run_cheapest_first() -> None:
    assert [gate.gate_name for gate in default_gates()] == [
        "parse",
        "static_policy",
        "contract",
        "leakage",
        "execution",
        "capability",
    ]
    assert [gate.gate_name for gate in default_gates(calibrate=True)][-1] == "calibration"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")
def test_a_correct_module_passes_every_gate(tau2_data: Path) -> None:
    report = validate_file(GOOD_MODULE, make_context(seeds=8))
    assert report.passed, report.table()
    assert report.stopped_by is None
    execution = report.result("execution")
    assert execution.details["blocked"] == 0 and execution.details["seeds"] == 8 + 2  # 8 fixed, 2 drawn
    assert len(execution.details["drawn_seeds"]) == 2 and execution.details["draw_seed"] == 30
    assert report.table().splitlines()[-1].startswith("retail_cancel.py: passed in")
    if not missing_layers():  # the report names every kernel layer that was in force
        layers = " | ".join(execution.details["isolation"])
        for layer in (*REQUIRED, "read-only filesystem", "no capabilities", "task limit", "audit hook"):
            assert layer in layers, layers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")
def test_the_generic_knobs_form_passes_every_gate(tau2_data: Path, tmp_path: Path) -> None:
    """``class MyEnv(CapabilityEnv[MyKnobs])``, the form the guide teaches, with knobs the env reads."""
    source = GOOD_MODULE.read_text(encoding="utf-8")
    source = source.replace(
        "class RetailCancelEnv(CapabilityEnv):",
        "class CancelKnobs(BaseModel):\n    users: int = 3\n\n\nclass RetailCancelEnv(CapabilityEnv[CancelKnobs]):",
    ).replace("users=3,", "users=self.knobs.users,")
    assert "self.knobs.users" in source
    module = tmp_path / "retail_cancel_knobs.py"
    module.write_text(source.replace("import random\n", "import random\n\nfrom pydantic import BaseModel\n"))
    report = validate_file(module, make_context(seeds=8))
    assert report.passed, report.table()


def test_the_first_failure_stops_the_rest() -> None:
    calls: list[str] = []

    def gate(name: str, status: str) -> Gate:
        @named_gate(name)
        def run(source: str, context: GateContext) -> GateResult:
            calls.append(name)
            return GateResult(gate=name, status=status)  # type: ignore[arg-type]

        return run

    report = validate_source(
        "x = 1\n", GateContext(target="retail"), [gate("a", "passed"), gate("b", "failed"), gate("c", "passed")]
    )
    assert calls == ["a", "b"]
    assert [(r.gate, r.status) for r in report.results] == [("a", "passed"), ("b", "failed"), ("c", "skipped")]
    assert report.stopped_by == "b" and not report.passed
    assert report.result("c").details["note"] == "stopped by b"


def test_a_gate_that_crashes_fails_with_a_message_not_a_traceback() -> None:
    @named_gate("broken")
    def broken(source: str, context: GateContext) -> GateResult:
        raise KeyError("oops")

    report = validate_source("x = 1\n", GateContext(target="retail"), [broken])
    (finding,) = report.findings()
    assert finding.rule == "gate-error" and "KeyError" in finding.message


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"target": "shop"}, "target"),
        ({"target": "retail", "seeds": 0}, "seeds"),
        ({"target": "retail", "fuzz_examples": 0}, "fuzz_examples"),
    ],
)
def test_bad_context_names_the_field(settings: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        GateContext(**settings)  # type: ignore[arg-type]


def test_bad_module_paths_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        validate_file(tmp_path / "absent.py", GateContext(target="retail"))
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"x = 1\n\xff\xfe\x00")
    report = validate_file(binary, GateContext(target="retail"))  # the parse gate names the line, not a crash
    assert report.stopped_by == "parse"
    assert [(f.rule, f.line) for f in report.result("parse").findings] == [("not-utf8", 2)]


def test_the_report_round_trips_as_json() -> None:
    report = validate_source("import os\n", GateContext(target="retail"))
    again = type(report).model_validate_json(report.model_dump_json())
    assert again == report and again.stopped_by == "static_policy"
    assert "static_policy  failed" in report.table()


def test_without_hypothesis_the_execution_gate_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from trace_envs.synthesis.gates import execution

    real = execution.importlib.util.find_spec
    monkeypatch.setattr(
        execution.importlib.util, "find_spec", lambda name, *a: None if name == "hypothesis" else real(name, *a)
    )
    result = execution.execution_gate("x = 1\n", GateContext(target="retail"))
    assert result.status == "failed"
    assert "trace-envs[synthesis]" in result.findings[0].fix


def test_the_ast_gates_run_safely_from_several_threads() -> None:
    """Candidates are synthesised and validated in parallel threads; on CPython < 3.12 two threads building
    AST objects at once (our gates, the prompt's contract guide) could fail with "AST constructor recursion depth mismatch" when the GIL changed hands mid-build.
    A garbage-collector callback that sleeps makes that hand-over happen inside the builds."""
    import gc
    import threading
    import time

    from trace_envs.synthesis.gates.contract import contract_gate
    from trace_envs.synthesis.gates.static_policy import parse_gate, static_policy_gate
    from trace_envs.synthesis.generation.prompt import contract_guide

    source = GOOD_MODULE.read_text(encoding="utf-8")

    def yield_the_gil(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            time.sleep(0.0001)

    errors: list[str] = []

    def validate_many() -> None:
        for _ in range(15):
            report = validate_source(
                source, GateContext(target="retail"), [parse_gate, static_policy_gate, contract_gate]
            )
            errors.extend(f.message for f in report.findings())

    def build_guides() -> None:  # the prompt's contract guide parses our sources too
        for _ in range(5):
            contract_guide.cache_clear()
            try:
                contract_guide()
            except SystemError as exc:
                errors.append(str(exc))

    threshold = gc.get_threshold()
    gc.set_threshold(50, 1, 1)
    gc.callbacks.append(yield_the_gil)
    try:
        threads = [threading.Thread(target=validate_many) for _ in range(3)]
        threads.append(threading.Thread(target=build_guides))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(yield_the_gil)
        gc.set_threshold(*threshold)
    assert errors == []
