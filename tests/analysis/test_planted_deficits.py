"""End to end, offline: trajectories of ``flawed:<capabilities>`` across a mix of the shipped envs,
analysed with the probes. The planted deficits, and only those, are kept; a killed labelling job
resumes to the same result."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from trace_envs.analysis import AnalysisConfig, load_analysis, run_analysis
from trace_envs.rollout.store import EpisodeRecord, TrajectoryStore

from .conftest import planted_store, shipped_capability_envs


def write_store(path: Path, records: list[EpisodeRecord]) -> Path:
    with TrajectoryStore(path, fsync=False) as store:
        for record in records:
            store.append(record)
    return path


def plantings(sizes: tuple[int, ...]) -> list[set[str]]:
    capabilities = sorted(set(shipped_capability_envs().values()))
    return [set(c) for size in sizes for c in itertools.combinations(capabilities, size)]


@pytest.mark.parametrize("planted", plantings((1, 2)), ids=lambda p: "+".join(sorted(p)))
def test_planted_deficits_and_only_those_are_kept(planted: set[str], capability_rollouts, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    envs = shipped_capability_envs()
    if len(set(envs.values())) < 2:
        pytest.skip("needs at least two shipped capability envs for a mix")
    store = write_store(tmp_path / "runs.jsonl", planted_store(capability_rollouts, planted, envs))
    result = run_analysis(store, AnalysisConfig(analyst="probes", runs=2), tmp_path / "out", report=False)
    assert sorted(result.kept) == sorted(planted)
    for name in planted:
        stats = result.runs[0].capabilities[name]
        contrast = stats.gap if stats.gap is not None else stats.er_minus  # ER+ undefined: every case failed
        assert contrast is not None and contrast >= 0.2
        assert stats.coverage is not None and stats.coverage >= 0.1
    assert result.failures > 0 and result.cost_usd == 0.0


def many_plantings() -> list[set[str]]:
    """A few triples and every capability at once (all combinations would cost CI time for little)."""
    everything = set(shipped_capability_envs().values())
    return [*plantings((3,))[:4], everything] if len(everything) > 3 else []


@pytest.mark.parametrize("planted", many_plantings(), ids=lambda p: "+".join(sorted(p)))
def test_many_planted_deficits_keep_no_false_capability(planted: set[str], capability_rollouts, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """With three or more deficits at once, nothing unplanted is kept. (A planted deficit whose flawed
    episodes often succeed - skipping the check on an order that could be cancelled anyway - can fall
    below delta once other deficits' failures dilute ER-; see docs/analysis.md.)"""
    store = write_store(tmp_path / "runs.jsonl", planted_store(capability_rollouts, planted, shipped_capability_envs()))
    result = run_analysis(store, AnalysisConfig(analyst="probes", runs=1), tmp_path / "out", report=False)
    assert set(result.kept) <= planted
    envs = shipped_capability_envs()
    always_failing = {
        c
        for c in planted
        if not any(r.success for e, cap in envs.items() if cap == c for r in capability_rollouts[(e, "flawed")])
    }
    assert always_failing <= set(result.kept)  # deficits whose flawed episodes never succeed are never diluted out


def test_analysis_resumes_after_a_kill_and_writes_the_report(capability_rollouts, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    envs = shipped_capability_envs()
    if not envs:
        pytest.skip("no shipped capability env")
    planted = {sorted(envs.values())[0]}
    store = write_store(tmp_path / "runs.jsonl", planted_store(capability_rollouts, planted, envs))
    config = AnalysisConfig(analyst="probes", runs=3)
    clean = run_analysis(store, config, tmp_path / "clean", report=False)
    # a job killed part-way: some rows written, the last one torn mid-line
    resumed_dir = tmp_path / "resumed"
    resumed_dir.mkdir()
    lines = (tmp_path / "clean" / "labels.jsonl").read_bytes().splitlines(keepends=True)
    (resumed_dir / "labels.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:40])
    (resumed_dir / "dictionary.json").write_bytes((tmp_path / "clean" / "dictionary.json").read_bytes())
    resumed = run_analysis(store, config, resumed_dir)
    assert resumed.kept == clean.kept
    assert [r.model_dump() for r in resumed.runs] == [r.model_dump() for r in clean.runs]
    assert len((resumed_dir / "labels.jsonl").read_bytes().splitlines()) == len(lines)
    assert load_analysis(resumed_dir).kept == clean.kept
    report = (resumed_dir / "report.md").read_text()
    assert "**Kept:**" in report and all(f"`{n}`" in report for n in clean.kept)
    assert (resumed_dir / "selection_frequency.png").stat().st_size > 0
    assert (resumed_dir / "coverage.png").stat().st_size > 0


def test_empty_or_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run_analysis(tmp_path / "nope.jsonl", AnalysisConfig(analyst="probes", runs=1), tmp_path / "out")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ValueError, match="no finished episode"):
        run_analysis(tmp_path / "empty.jsonl", AnalysisConfig(analyst="probes", runs=1), tmp_path / "out")


def test_all_successes_keep_nothing_with_undefined_coverage(capability_rollouts, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    envs = shipped_capability_envs()
    if not envs:
        pytest.skip("no shipped capability env")
    store = write_store(tmp_path / "runs.jsonl", planted_store(capability_rollouts, set(), envs))
    result = run_analysis(store, AnalysisConfig(analyst="probes", runs=1), tmp_path / "out")
    assert result.failures == 0 and result.kept == []
    assert all(s.coverage is None for s in result.runs[0].capabilities.values())
    assert "undefined" in (tmp_path / "out" / "report.md").read_text()
