"""The report states the keep rule it applies, including a capability kept with an undefined gap."""

from __future__ import annotations

from trace_envs.analysis.models import AnalysisConfig, AnalysisResult, CapabilityDictionary, CapabilitySummary
from trace_envs.analysis.report import render_markdown


def result_with(summary: CapabilitySummary, config: AnalysisConfig) -> AnalysisResult:
    dictionary = CapabilityDictionary.model_validate(
        {"capabilities": [{"name": summary.capability, "description": "Checks before acting."}]}
    )
    return AnalysisResult(config=config, dictionary=dictionary, summary=[summary], kept=[summary.capability])


def test_report_states_the_rule_for_an_undefined_gap() -> None:
    config = AnalysisConfig(analyst="probes", runs=3)
    kept = CapabilitySummary(
        capability="precondition_verification", runs=3, selected=3, selection_frequency=1.0,
        coverage_median=1.0, coverage_q1=1.0, coverage_q3=1.0, gap_median=None, kept=True,
    )  # fmt: skip
    text = render_markdown(result_with(kept, config), plots=[])
    assert "keep rule: gap >= 0.2 and coverage" not in text  # the old statement the undefined gap contradicted
    assert "Keep rule: selected in a run when coverage >= 0.1 and gap = ER- - ER+ >= 0.2," in text
    assert "gap = ER- - ER+ >= 0.2, or, when no successful trajectory needed the capability" in text
    assert "(ER+ and the gap undefined), ER- >= 0.2" in text
    assert "kept when selected in at least 50% of the 3 runs" in text
    assert "Kept with an undefined gap (tested on ER- alone, see the keep rule): `precondition_verification`." in text


def test_rule_with_require_contrast_and_one_run() -> None:
    from trace_envs.analysis.report import keep_rule

    rule = keep_rule(AnalysisConfig(analyst="probes", runs=1, require_contrast=True, delta=0.3, rho=0.05))
    assert rule.startswith("selected in a run when coverage >= 0.05 and gap = ER- - ER+ >= 0.3 (never when")
    assert rule.endswith("kept when selected in at least 50% of the run")
