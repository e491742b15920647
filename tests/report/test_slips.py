"""Two report slips: the methods section claims no baseline match when none ran, and a bar's value label at
the top of the scale stays inside the plot instead of sitting on its top border."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trace_envs.evaluation import EvaluationResults, PolicyEvaluation, PolicySummary, TargetInfo
from trace_envs.report.baselines import methods_section
from trace_envs.report.inputs import collect_inputs

from .conftest import estimate, summary


def test_without_a_baseline_the_methods_section_says_none_ran(run_dir: Path) -> None:
    shutil.rmtree(run_dir / "baselines")
    text = " ".join(methods_section(collect_inputs(run_dir)).paragraphs)
    assert "matched on the same count" not in text, text
    assert "No baseline ran in this folder" in text and "--budget 56" in text


def test_with_a_baseline_the_methods_section_says_it_is_matched(run_dir: Path) -> None:
    text = " ".join(methods_section(collect_inputs(run_dir)).paragraphs)
    assert "TRACE's adapters spent 56 rollouts" in text and "the baselines are matched on the same count" in text


def device_results(pass_rate: float, similarity: float) -> EvaluationResults:
    overall = summary(pass_rate, "overall", 8).model_copy(update={"mean_similarity": estimate(similarity)})
    policy = PolicyEvaluation(
        name="oracle", spec="oracle", kind="scripted", base_model="", adapters=[], outcomes=[],
        summary=PolicySummary(domains={}, overall=overall, episodes=8),
    )  # fmt: skip
    return EvaluationResults(
        target=TargetInfo(name="device", domains=["device"], source="builtin", tasks=8), trials=1, policies=[policy]
    )


@pytest.mark.parametrize(("pass_rate", "similarity"), [(1.0, 1.0), (0.9, 0.95)])
def test_the_value_labels_stay_inside_the_plot(pass_rate: float, similarity: float) -> None:
    from trace_envs.report.score_plots import pass_rate_figure

    figure = pass_rate_figure(device_results(pass_rate, similarity))
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    checked = 0
    for axis in figure.axes:
        frame = axis.get_window_extent(renderer)
        for label in axis.texts:
            box = label.get_window_extent(renderer)
            assert box.y1 < frame.y1 - 1, (axis.get_title(), label.get_text(), box.y1, frame.y1)
            checked += 1
    assert checked == 2  # the pass-rate label and the similarity label
