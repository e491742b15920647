"""Gate 5, the capability check: the flawed solution fails often enough, and fails as a near miss.

The execution gate already requires the flawed solution to fail on some seed. That a solution fails
says nothing about the capability, though: an empty message fails every task. This gate reads the
per-seed evidence the sandbox brought back (``context.evidence["execution"]``) and asks for more:

- the flawed solution is declared;
- it fails (reward below 1) on at least ``context.flawed_failure_share`` of the fixed seeds (``0 ..
  context.seeds - 1``; the seeds validation draws afresh on each run are not counted, so the share, and the
  gate's verdict on a module, is the same on every run), *as a near miss*: on those seeds it keeps a step of
  the reference or acts on the records the reference acts on (a call passing one of the reference's argument
  values), so it attempts the task, and it keeps the reference's steps up to the skipped capability (the
  first difference is a reference step left out or replaced, not a step of its own added before), rather
  than doing nothing, calling an unrelated tool or doing something else first.
"""

from __future__ import annotations

from typing import Any

from ..sandbox.protocol import FlawedEvidence, SandboxOutcome
from .context import GateContext, named_gate
from .reports import Finding, GateResult

FIX_NEAR_MISS = (
    "Make Task.flawed_solution follow the reference solution except for the steps that exercise the capability "
    "(e.g. skip the check and act, or pick the near-miss record), so that it fails for lack of the capability."
)


def _why_not(evidence: FlawedEvidence) -> str:
    """Why one failing seed's flawed solution is not a near miss, in the words a finding uses."""
    steps = evidence.steps
    assert steps is not None
    if not steps.attempts_task:
        return "it keeps no step of the reference and acts on none of the reference's records (it does nothing)"
    if steps.first_difference == "adds":
        return (
            f"after {steps.diverges_at} shared step(s) it adds a step of its own [{'; '.join(steps.flawed_only[:1])}] "
            "before skipping anything, so it does not follow the reference up to the skipped capability"
        )
    return "it keeps every step of the reference and only adds steps, so it skips no capability"


def _describe(evidence: FlawedEvidence) -> str:
    steps = evidence.steps
    if steps is None:
        return ""
    left_out = "; ".join(steps.reference_only) or "nothing"
    added = "; ".join(steps.flawed_only) or "nothing"
    return f" (seed {evidence.seed}: it leaves out [{left_out}] and adds [{added}])"


@named_gate("capability")
def capability_gate(source: str, context: GateContext) -> GateResult:
    """Gate 5: the flawed solution fails on enough seeds, and as a near miss of the reference."""
    outcome = context.evidence.get("execution")
    if not isinstance(outcome, SandboxOutcome) or outcome.result is None or not outcome.result.flawed:
        missing = Finding(
            rule="no-evidence",
            message="the execution gate left no per-seed evidence of the flawed solution.",
            fix="Run the execution gate before the capability gate (default_gates() does).",
        )
        return GateResult(gate="capability", status="failed", findings=[missing])
    fixed = [e for e in outcome.result.flawed if e.seed < context.seeds]
    evidence = fixed or outcome.result.flawed  # (a sandbox that played no fixed seed: what it played)
    seeds = len(evidence)
    declared = [e for e in evidence if e.declared]
    failing = [e for e in declared if e.reward is not None and e.reward < 1.0]
    near_misses = [e for e in failing if e.steps is not None and e.steps.near_miss]
    needed = context.flawed_failure_share
    details: dict[str, Any] = {
        "seeds": seeds,
        "declared": len(declared),
        "flawed_fails": len(failing),
        "near_miss_fails": len(near_misses),
        "required_share": needed,
        "near_miss_share": round(len(near_misses) / seeds, 4),
    }
    if near_misses:
        shown = near_misses[0]
        assert shown.steps is not None
        details["example"] = {
            "seed": shown.seed,
            "reference_only": shown.steps.reference_only,
            "flawed_only": shown.steps.flawed_only,
            "shared": shown.steps.shared,
        }
    findings: list[Finding] = []
    if not declared:
        findings.append(
            Finding(
                rule="no-flawed-solution",
                message=(
                    f"flawed_actions() returns None on all {seeds} seeds; without a flawed solution nothing shows "
                    "that the verifier tells the capability apart."
                ),
                fix="Set Task.flawed_solution to the capability's typical failure (the reference minus the capability).",
            )
        )
        return GateResult(gate="capability", status="failed", findings=findings, details=details)
    if len(near_misses) < needed * seeds:
        junk = [e for e in failing if e.steps is not None and not e.steps.near_miss]
        if junk:
            message = (
                f"the flawed solution fails on {len(failing)} of {seeds} seeds, but on {len(junk)} of them it is not "
                f"a near miss of the reference: on seed {junk[0].seed} {_why_not(junk[0])}, so its failure says "
                f"nothing about the capability{_describe(junk[0])}; near-miss failures: {len(near_misses)} of "
                f"{seeds}, {needed:.0%} needed."
            )
            seed: int | None = junk[0].seed
        else:
            message = (
                f"the flawed solution fails (as a near miss of the reference) on only {len(near_misses)} of {seeds} "
                f"seeds; at least {needed:.0%} are needed, so most tasks do not test the capability."
            )
            seed = None
        findings.append(
            Finding(
                rule="flawed-not-a-near-miss" if junk else "flawed-rarely-fails",
                seed=seed,
                message=message,
                fix=FIX_NEAR_MISS
                if junk
                else "Generate more tasks where skipping the capability fails (e.g. raise the share of cases "
                "where the check matters), or make the verifier stricter about what the capability decides.",
            )
        )
    return GateResult(gate="capability", status="failed" if findings else "passed", findings=findings, details=details)
