"""The report of a multi-target run (issue 23): every target's analysis, manifest and routing shows; one name
per policy in tables and plots; flat series and zero bars stay visible; legends are unique; counts have whole
ticks; each figure has its own caption; sections follow the run's target order; and the evaluation says which
tasks it used. Plots are checked on the figure objects (the browser test checks the rendered page)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from trace_envs.report import collect_inputs, write_report
from trace_envs.report.scaling import points, scaling_figure
from trace_envs.report.score_plots import pass_rate_figure
from trace_envs.report.scores import tasks_text
from trace_envs.report.training import curves_figure

from .multi_target import make_multi_target_run

ORDER = ["device", "retail", "airline"]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_multi_target_run(tmp_path / "run")


@pytest.fixture
def report(run: Path, tmp_path: Path) -> str:
    return write_report(run, tmp_path / "report", targets=ORDER).markdown.read_text(encoding="utf-8")


def close(figure: Any) -> None:
    import matplotlib.pyplot as plt

    plt.close(figure)


def test_every_targets_analysis_manifest_and_routing_is_reported(report: str) -> None:
    headings = [line[3:] for line in report.splitlines() if line.startswith("## ")]
    for target in ORDER:
        assert f"Capability selection and coverage: {target}" in headings
        assert f"rollout episodes of `rollout/{target}.jsonl`" in report
    assert "4 module(s) validated and 0 capability(ies) rejected in 3 manifest(s)" in report
    assert "by target: device 2, retail 1, airline 1" in report
    gate_rows = [line for line in report.splitlines() if re.match(r"\| (device|retail|airline) \| `\w+\.py` \|", line)]
    assert [row.split(" | ")[0][2:] for row in gate_rows] == ["device", "device", "retail", "airline"]


def test_the_routing_table_lists_the_adapters_that_were_candidates(report: str) -> None:
    # the device's routed policy had two adapters; the router sent every rollout task and every evaluation task
    # to the second, which passed two of them: those two are solvable, and the router sent both to a solver
    assert "| `datetime_reasoning` | `train/device/datetime_reasoning` | not evaluated alone | 0/9 (0 passed) | 0 | 0/48 (0.0%) |" in report  # fmt: skip
    assert "| `permission_error_recovery` | `train/device/permission_error_recovery` | not evaluated alone | 9/9 (2 passed) | 2 | 48/48 (100.0%) |" in report  # fmt: skip
    assert "| `__base__` (the base model alone) | none | model | 0/9 (0 passed) | 0 | 0/48 (0.0%) |" in report
    assert "| routed | 3 | 9 | 2 | 100.0% [100.0%, 100.0%] | 22.2% [0.0%, 55.6%] | 22.2% |" in report
    assert "| `multi_step_task_completion` | `train/retail/multi_step_task_completion` |" in report
    assert "| routed | 2 | 9 | 0 | n/a (no candidate is known to solve any task) |" in report
    assert report.count("Route-only evaluation of `routed`: one row per candidate") == 3  # the caption, per target


def test_one_name_per_policy_in_tables_and_plots(run: Path) -> None:
    inputs = collect_inputs(run, ORDER)
    device = inputs.evaluations[0].results
    figure = pass_rate_figure(device)
    legend = [t.get_text() for t in figure.axes[-1].get_legend().get_texts()]
    close(figure)
    assert legend == ["base", "model", "routed"]  # the names the tables use
    placed, _ = points(inputs.evaluations[0], inputs)
    figure = scaling_figure(placed, "mean similarity", "t")
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    close(figure)
    # the base model is the policy named "model": never called "base", which names the scripted agent
    assert legend == ["model (0 rollouts)", "routed (TRACE)"]


def test_flat_zero_series_get_readable_axes(run: Path) -> None:
    inputs = collect_inputs(run, ORDER)
    figure = pass_rate_figure(inputs.evaluations[1].results)  # retail: model and routed at 0
    low, high = figure.axes[0].get_ylim()
    assert low < 0 < 100 < high and high - low < 120  # 0 to 100 %, the zero line above the frame
    assert [t for t in figure.axes[0].get_yticks() if 0 <= t <= 100] == [0, 20, 40, 60, 80, 100]
    close(figure)
    placed, _ = points(inputs.evaluations[1], inputs)
    figure = scaling_figure(placed, "pass rate", "t")
    low, high = figure.axes[0].get_ylim()
    assert low < 0 and high > 100
    close(figure)
    figure = curves_figure(inputs.adapters, inputs.adapter_labels())
    reward, loss = figure.axes[:2]
    assert loss.get_ylim() == (-1.0, 1.0)  # not matplotlib's -0.04 .. 0.04 around a flat 0
    assert any("flat: every value is 0" in t.get_text() for t in loss.texts)
    assert reward.get_ylim()[0] < 0
    close(figure)


def test_overlapping_training_curves_stay_visible_with_unique_labels(run: Path) -> None:
    inputs = collect_inputs(run, ORDER)
    labels = inputs.adapter_labels()
    assert labels == [
        "datetime_reasoning", "permission_error_recovery", "multi_step_task_completion (retail)",
        "multi_step_task_completion (airline)",
    ]  # fmt: skip
    figure = curves_figure(inputs.adapters, labels)
    lines = [line for line in figure.axes[0].get_lines() if line.get_label() in labels]
    legend = [t.get_text() for t in figure.axes[1].get_legend().get_texts()]
    close(figure)
    assert legend == labels
    assert len({(line.get_marker(), line.get_linestyle(), line.get_color()) for line in lines}) == 4
    assert len({tuple(line.get_xdata()) for line in lines}) == 4  # nudged apart, not drawn on top of each other


def test_zero_bars_are_drawn_and_counts_have_whole_ticks(run: Path) -> None:
    from trace_envs.analysis.plots import selection_figure

    inputs = collect_inputs(run, ORDER)
    figure = pass_rate_figure(inputs.evaluations[0].results)  # device: base and model at 0
    axis = figure.axes[0]
    labels = [t.get_text() for t in axis.texts]
    zero_marks = [line for line in axis.get_lines() if list(line.get_ydata()) == [0, 0] and line.get_linewidth() == 3]
    close(figure)
    assert labels.count("0") == 2 and "22" in labels  # every bar carries its value
    assert len(zero_marks) == 2  # base and model: a thick line at 0 in the bar's colour
    figure = selection_figure(inputs.analyses[0].result)
    axis = figure.axes[0]
    ticks = [t for t in axis.get_xticks() if 0 <= t <= 3]
    texts = [t.get_text() for t in axis.texts]
    close(figure)
    assert ticks == [0, 1, 2, 3]  # "runs selected (of 3)": whole runs
    assert "0/3" in texts and "3/3" in texts


def test_each_figure_has_its_own_caption_about_panels_it_has(run: Path, tmp_path: Path) -> None:
    files = write_report(run, tmp_path / "report", targets=ORDER)
    text = files.markdown.read_text(encoding="utf-8")
    captions = [line for line in text.splitlines() if line.startswith("*") and line.count("*") >= 2]
    assert len(captions) == len(files.plots) == len(set(captions))
    retail = next(c for c in captions if c.startswith("*Pass rate per policy on tau2-retail.*"))
    device = next(c for c in captions if c.startswith("*Pass rate per policy on device.*"))
    assert "similarity" not in retail and "panel" not in retail.lower()  # one panel on tau2
    assert "Right panel: each policy's mean similarity" in device and "Left panel: the pass rate" in device


def test_sections_follow_the_runs_target_order(run: Path, tmp_path: Path) -> None:
    def evaluations(targets: list[str] | None) -> list[str]:
        text = write_report(run, tmp_path / str(targets), targets=targets).markdown.read_text(encoding="utf-8")
        return [line[3:] for line in text.splitlines() if line.startswith("## Evaluation on ")]

    assert evaluations(ORDER) == ["Evaluation on device", "Evaluation on tau2-retail", "Evaluation on tau2-airline"]
    assert evaluations(None) == ["Evaluation on device", "Evaluation on tau2-airline", "Evaluation on tau2-retail"]


def test_the_evaluation_says_which_tasks_it_used(report: str) -> None:
    assert "3 policies on the first 9 of 48 device tasks (9 in all, split all)" in report
    assert "Only these 9 tasks were evaluated (`task-0`, `task-1`, `task-2`, `task-3`, `task-4`, `task-5`, `task-6`, `task-7`, `task-8`): a pass rate here is not comparable with one over all 48" in report  # fmt: skip
    assert "3 policies on all 9 retail tasks (split base)" in report
    assert "48 rollout episodes of `rollout/device.jsonl` (18 successes: 37.5%" in report


def test_the_target_records_how_many_tasks_it_had() -> None:
    from trace_envs.evaluation.targets import load_target

    info = load_target("device", limit=9).info
    assert (info.tasks, info.available, info.limit) == (9, 48, 9)
    assert tasks_text(info) == "the first 9 of 48 device tasks (9 in all, split all)"
