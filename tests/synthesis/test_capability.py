"""Gate 5, the capability check, on hand-made sandbox evidence; and the step comparison it reads."""

from __future__ import annotations

import json

import pytest

from trace_envs.core import ToolCall, format_tool_call
from trace_envs.synthesis import GateContext, SandboxLimits, SandboxOutcome
from trace_envs.synthesis.gates.capability_check import capability_gate
from trace_envs.synthesis.gates.steps import compare_steps, step_key
from trace_envs.synthesis.sandbox.protocol import BoxResult, FlawedEvidence

LOOKUP = format_tool_call(ToolCall(name="get_order_details", arguments={"order_id": "#W1"}))
CANCEL = format_tool_call(ToolCall(name="cancel_pending_order", arguments={"order_id": "#W1", "reason": "x"}))
REFERENCE = [LOOKUP, CANCEL, "Order #W1 is cancelled."]


def outcome(*evidence: FlawedEvidence) -> SandboxOutcome:
    return SandboxOutcome(run_id="t", result=BoxResult(mode="suite", flawed=list(evidence)), limits=SandboxLimits())


def seed(number: int, flawed: list[str] | None, reward: float) -> FlawedEvidence:
    if flawed is None:
        return FlawedEvidence(seed=number, declared=False)
    return FlawedEvidence(
        seed=number,
        declared=True,
        reward=reward,
        same_as_oracle=flawed == REFERENCE,
        steps=compare_steps(REFERENCE, flawed),
    )


def run_gate(*evidence: FlawedEvidence, share: float = 0.2):  # type: ignore[no-untyped-def]
    context = GateContext(target="retail", flawed_failure_share=share)
    context.evidence["execution"] = outcome(*evidence)
    return capability_gate("", context)


def test_step_keys_ignore_formatting_of_calls_and_whitespace_of_messages() -> None:
    hermes = '<tool_call>{"arguments": {"order_id": "#W1"}, "name": "get_order_details"}</tool_call>'
    assert step_key(hermes) == step_key(LOOKUP)
    assert step_key("Order  #W1\nis cancelled.") == step_key("Order #W1 is cancelled.")
    assert step_key(LOOKUP) != step_key(CANCEL)


def test_compare_steps_names_what_the_flawed_solution_leaves_out_and_adds() -> None:
    diff = compare_steps(REFERENCE, [CANCEL, "Order #W1 is cancelled."])
    assert diff.shared == 2 and diff.flawed_tool_calls == 1 and diff.near_miss
    assert diff.reference_only == [step_key(LOOKUP)] and diff.flawed_only == []
    junk = compare_steps(REFERENCE, [""])
    assert junk.shared == 0 and junk.flawed_tool_calls == 0 and not junk.near_miss
    assert json.loads(junk.reference_only[0].removeprefix("call get_order_details ")) == {"order_id": "#W1"}


def test_a_near_miss_that_fails_often_enough_passes() -> None:
    skip_check = [CANCEL, "Order #W1 is cancelled."]
    result = run_gate(seed(0, skip_check, 0.0), seed(1, skip_check, 1.0), seed(2, skip_check, 0.0))
    assert result.status == "passed", result.findings
    assert result.details["near_miss_fails"] == 2 and result.details["example"]["seed"] == 0


def test_a_junk_flawed_solution_is_stopped_with_the_seed_and_the_difference() -> None:
    result = run_gate(*(seed(n, [""], 0.0) for n in range(4)))
    assert result.status == "failed"
    (finding,) = result.findings
    assert finding.rule == "flawed-not-a-near-miss" and finding.seed == 0
    assert "keeps no step of the reference and acts on none of the reference's records" in finding.message
    assert "get_order_details" in finding.message and "follow the reference solution" in finding.fix


def test_a_flawed_solution_that_rarely_fails_is_stopped_at_the_configured_share() -> None:
    skip_check = [CANCEL, "Order #W1 is cancelled."]
    evidence = [seed(0, skip_check, 0.0), *(seed(n, skip_check, 1.0) for n in range(1, 10))]
    assert run_gate(*evidence, share=0.1).status == "passed"
    result = run_gate(*evidence, share=0.2)
    assert result.status == "failed" and result.findings[0].rule == "flawed-rarely-fails"
    assert "only 1 of 10 seeds" in result.findings[0].message


def test_the_share_counts_the_fixed_seeds_only_so_a_fresh_draw_never_changes_the_verdict() -> None:
    """Validation also plays seeds drawn afresh on each run; counting them made a module whose flawed solution
    fails on about half the seeds fail this gate on about 2% of runs with --seeds 5 (1 of its 5 fixed seeds
    fails, and 10 drawn seeds could bring too few more)."""
    skip_check = [CANCEL, "Order #W1 is cancelled."]
    fixed = [seed(0, skip_check, 0.0), *(seed(n, skip_check, 1.0) for n in range(1, 5))]
    for drawn_reward in (0.0, 1.0):  # whatever the draw brings
        drawn = [seed(n, skip_check, drawn_reward) for n in (731, 90_210, 1_234_567)]
        context = GateContext(target="retail", seeds=5, flawed_failure_share=0.2)
        context.evidence["execution"] = outcome(*fixed, *drawn)
        result = capability_gate("", context)
        assert result.status == "passed" and result.details["seeds"] == 5, result.findings
    context = GateContext(target="retail", seeds=5, flawed_failure_share=0.2)
    context.evidence["execution"] = outcome(*(seed(n, skip_check, 1.0) for n in range(5)), seed(77, skip_check, 0.0))
    assert capability_gate("", context).status == "failed"  # a drawn seed's failure does not make up for them


def test_no_flawed_solution_at_all_is_stopped() -> None:
    result = run_gate(seed(0, None, 0.0), seed(1, None, 0.0))
    assert result.status == "failed" and result.findings[0].rule == "no-flawed-solution"


def test_without_execution_evidence_the_gate_says_so() -> None:
    result = capability_gate("", GateContext(target="retail"))
    assert result.status == "failed" and result.findings[0].rule == "no-evidence"


@pytest.mark.parametrize("share", [0.0, 1.5])
def test_the_share_must_be_a_share(share: float) -> None:
    with pytest.raises(ValueError, match=r"^flawed_failure_share: "):
        GateContext(target="retail", flawed_failure_share=share)


def test_a_call_to_an_unrelated_tool_or_other_records_is_not_a_near_miss() -> None:
    unrelated = format_tool_call(ToolCall(name="list_all_product_types", arguments={}))
    other_order = format_tool_call(ToolCall(name="cancel_pending_order", arguments={"order_id": "#W9", "reason": "y"}))
    for flawed in ([unrelated, "Sorry, I cannot help."], [other_order]):
        diff = compare_steps(REFERENCE, flawed)
        assert diff.flawed_tool_calls == 1 and diff.flawed_calls_on_reference_records == 0 and not diff.near_miss
    result = run_gate(*(seed(n, [unrelated, "Sorry, I cannot help."], 0.0) for n in range(3)))
    assert not result.passed and result.findings[0].rule == "flawed-not-a-near-miss"
    skip_check = compare_steps(REFERENCE, [format_tool_call(ToolCall(name="cancel_pending_order", arguments={}))])
    assert not skip_check.near_miss  # no argument in common: it acts on no record of the task
    acts_on_the_order = compare_steps(REFERENCE[1:2], [format_tool_call(ToolCall(name="x", arguments={"id": "#W1"}))])
    assert acts_on_the_order.near_miss


def test_a_near_miss_keeps_the_reference_up_to_the_skipped_capability() -> None:
    skips_the_lookup = compare_steps(REFERENCE, [CANCEL, "Order #W1 is cancelled."])
    assert skips_the_lookup.first_difference == "skips" and skips_the_lookup.diverges_at == 0
    assert skips_the_lookup.near_miss
    stuffing = format_tool_call(ToolCall(name="get_order_details", arguments={"order_id": "#W1", "x": 1}))
    adds_first = compare_steps(REFERENCE, [stuffing, LOOKUP, "Order #W1 is cancelled."])
    assert adds_first.attempts_task and adds_first.first_difference == "adds" and not adds_first.near_miss
    adds_after_a_shared_step = compare_steps(REFERENCE, [LOOKUP, "pending, processed, delivered", CANCEL])
    assert adds_after_a_shared_step.diverges_at == 1 and not adds_after_a_shared_step.near_miss
    only_adds = compare_steps(REFERENCE, [*REFERENCE, CANCEL])
    assert only_adds.first_difference == "none" and not only_adds.near_miss
    result = run_gate(*(seed(n, [LOOKUP, "pending, processed, delivered", CANCEL], 0.0) for n in range(3)))
    finding = result.findings[0]
    assert not result.passed and finding.rule == "flawed-not-a-near-miss" and finding.seed == 0
    assert "after 1 shared step(s) it adds a step of its own" in finding.message
