"""Figure 4's placement: each evaluated method at the training rollouts it spent, the base at zero."""

from __future__ import annotations

import shutil
from pathlib import Path

from trace_envs.report import collect_inputs, write_report
from trace_envs.report.scaling import placement, points


def test_methods_are_placed_at_the_rollouts_they_spent(run_dir: Path) -> None:
    inputs = collect_inputs(run_dir)
    results = inputs.evaluations[0].results
    placed = {name: placement(results.policy(name), inputs) for name in ("base", "trace", "grpo")}
    # the base spends nothing; TRACE what its two adapters spent (4 and 3 steps of 8 rollouts); GRPO its record
    assert placed == {"base": ("base", 0), "trace": ("TRACE", 56), "grpo": ("grpo", 56)}
    assert placement(results.policy("structured_data_reasoning"), inputs) is None  # a single adapter: a gain
    placed_points, unknown = points(inputs.evaluations[0], inputs)
    assert [(p.method, p.rollouts, p.estimate.value) for p in placed_points] == [
        ("base", 0, 0.30),
        ("TRACE", 56, 0.50),
        ("grpo", 56, 0.35),
    ]
    assert unknown == []


def test_the_results_own_count_wins(run_dir: Path) -> None:
    inputs = collect_inputs(run_dir)
    trace = inputs.evaluations[0].results.policy("trace")
    trace.rollouts_spent = 120
    assert placement(trace, inputs) == ("TRACE", 120)


def test_a_method_without_a_count_is_named_not_plotted(run_dir: Path, tmp_path: Path) -> None:
    shutil.rmtree(run_dir / "adapters" / "precondition_verification")  # TRACE's rollouts are now unknown
    files = write_report(run_dir, tmp_path / "report")
    text = files.markdown.read_text(encoding="utf-8")
    assert "tau2: left off for want of a rollout count: trace (give them a baseline.json" in text
    assert "rollouts_tau2.png" in [p.name for p in files.plots]  # grpo is still placed
