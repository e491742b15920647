"""Contrastive statistics on hand-built label tables, including empty and degenerate ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_envs.analysis import CapabilityLabel, Label, TrajectoryLabels, capability_stats, run_stats, summarize
from trace_envs.analysis.stats import kept_names

NA, P, L = Label.NA, Label.PRESENT, Label.LACKING


def rows(successes: list[Label], failures: list[Label]) -> list[tuple[bool, Label]]:
    return [(True, label) for label in successes] + [(False, label) for label in failures]


def test_paper_formulas_on_a_small_table() -> None:
    stats = capability_stats(rows([P, P, L, NA], [L, L, P, NA, NA]), "c")
    assert (stats.successes, stats.failures) == (4, 5)
    assert stats.er_plus == pytest.approx(1 / 3)
    assert stats.er_minus == pytest.approx(2 / 3)
    assert stats.gap == pytest.approx(1 / 3)
    assert stats.coverage == pytest.approx(2 / 5)
    assert stats.kept


def test_empty_table_is_undefined_not_zero() -> None:
    stats = capability_stats([], "c")
    assert stats.er_plus is None and stats.er_minus is None and stats.gap is None and stats.coverage is None
    assert not stats.kept
    assert "coverage undefined" in stats.reason


def test_all_na_gives_undefined_error_rates_and_zero_coverage() -> None:
    stats = capability_stats(rows([NA, NA], [NA, NA, NA]), "c")
    assert stats.er_plus is None and stats.er_minus is None and stats.gap is None
    assert stats.coverage == 0.0
    assert not stats.kept


def test_no_failures_means_coverage_undefined() -> None:
    stats = capability_stats(rows([L, P], []), "c")
    assert stats.er_plus == 0.5 and stats.er_minus is None and stats.coverage is None
    assert not stats.kept


def test_no_applicable_success_leaves_the_gap_undefined() -> None:
    stats = capability_stats(rows([NA, NA], [L, L]), "c")
    assert stats.er_plus is None and stats.er_minus == 1.0 and stats.gap is None and stats.coverage == 1.0
    assert stats.kept and "ER+ undefined" in stats.reason  # ER- stands in for the gap
    strict = capability_stats(rows([NA, NA], [L, L]), "c", require_contrast=True)
    assert strict.gap is None and not strict.kept and "no contrast" in strict.reason
    low = capability_stats(rows([NA], [L] + [P] * 9), "c", delta=0.2)
    assert low.er_minus == pytest.approx(0.1) and not low.kept


def test_only_failures_all_lacking() -> None:
    stats = capability_stats(rows([], [L, L, L]), "c")
    assert stats.er_minus == 1.0 and stats.er_plus is None and stats.gap is None and stats.kept


def test_gap_exactly_delta_is_kept_despite_float_rounding() -> None:
    # ER- = 0.7, ER+ = 0.5: 0.7 - 0.5 is 0.19999999999999996 in floats, but the rule says >= 0.2
    stats = capability_stats(rows([L] * 5 + [P] * 5, [L] * 7 + [P] * 3), "c", delta=0.2, rho=0.1)
    assert stats.gap == pytest.approx(0.2)
    assert stats.kept


def test_coverage_exactly_rho_is_kept_and_below_is_not() -> None:
    failures = [L] + [NA] * 9  # coverage 1/10, ER- = 1
    assert capability_stats(rows([P], failures), "c", rho=0.1).kept
    below = capability_stats(rows([P], [L] + [NA] * 10), "c", rho=0.1)
    assert not below.kept and "coverage" in below.reason


def test_gap_below_delta_is_not_kept() -> None:
    stats = capability_stats(rows([L, P], [L, L, P]), "c", delta=0.2)
    assert stats.gap == pytest.approx(2 / 3 - 1 / 2)
    assert not stats.kept and "gap" in stats.reason


def test_thresholds_are_configurable() -> None:
    table = rows([L, P], [L, L, P])
    assert capability_stats(table, "c", delta=0.1, rho=0.5).kept
    assert not capability_stats(table, "c", delta=0.1, rho=0.9).kept


def labels_row(run: int, episode: str, success: bool, **labels: Label) -> TrajectoryLabels:
    return TrajectoryLabels(
        run=run,
        episode=episode,
        success=success,
        labels={n: CapabilityLabel(capability=n, label=v, rationale="r") for n, v in labels.items()},
    )


def test_run_stats_treat_missing_labels_as_na() -> None:
    table = [labels_row(0, "a", True, x=P), labels_row(0, "b", False, x=L, y=L), labels_row(0, "c", False)]
    stats = run_stats(table, ["x", "y"], run=0)
    assert stats.capabilities["x"].er_minus == 1.0 and stats.capabilities["x"].coverage == 0.5
    assert stats.capabilities["y"].er_plus is None and stats.capabilities["y"].gap is None
    assert stats.kept == ["x", "y"]
    strict = run_stats(table, ["x", "y"], run=0, require_contrast=True)
    assert strict.kept == ["x"]


def test_summary_frequency_median_iqr_and_min_selection() -> None:
    runs = []
    for run, lacking in enumerate([4, 3, 2, 1]):  # coverage 0.4, 0.3, 0.2, 0.1 of 10 failures
        table = [labels_row(run, "s", True, x=P, y=P)]
        table += [labels_row(run, f"f{i}", False, x=L if i < lacking else P, y=P) for i in range(10)]
        runs.append(run_stats(table, ["x", "y"], run=run, delta=0.2, rho=0.25))
    summary = {s.capability: s for s in summarize(runs, ["x", "y"], min_selection=0.5)}
    x = summary["x"]
    assert (x.selected, x.runs, x.selection_frequency) == (2, 4, 0.5)
    assert x.coverage_median == pytest.approx(0.25)
    assert x.coverage_q1 == pytest.approx(0.175) and x.coverage_q3 == pytest.approx(0.325)
    assert x.kept
    assert not summary["y"].kept and summary["y"].coverage_median == 0.0
    stricter = {s.capability: s for s in summarize(runs, ["x", "y"], min_selection=0.75)}
    assert not stricter["x"].kept
    assert kept_names(list(summary.values())) == ["x"]


def test_summary_of_no_runs_and_of_undefined_coverage() -> None:
    assert summarize([], ["x"])[0].kept is False
    only_successes = [run_stats([labels_row(0, "s", True, x=L)], ["x"], run=0)]
    summary = summarize(only_successes, ["x"])[0]
    assert summary.coverage_median is None and summary.coverage_q1 is None and not summary.kept


label_lists = st.lists(st.sampled_from(list(Label)), max_size=30)


@given(label_lists, label_lists)
def test_ratios_are_bounded_and_coverage_never_exceeds_er_minus(successes: list[Label], failures: list[Label]) -> None:
    stats = capability_stats(rows(successes, failures), "c")
    for value in (stats.er_plus, stats.er_minus, stats.coverage):
        assert value is None or 0.0 <= value <= 1.0
    if stats.coverage is not None and stats.er_minus is not None:
        assert stats.coverage <= stats.er_minus + 1e-12
    assert (stats.gap is None) == (stats.er_plus is None or stats.er_minus is None)
    if stats.kept:
        contrast = stats.gap if stats.gap is not None else stats.er_minus
        assert contrast is not None and contrast >= 0.2 - 1e-12 and stats.coverage is not None
