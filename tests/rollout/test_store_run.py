"""``rollout_into_store``: the one summary of a rollout run into a store that the cli and the pipeline share."""

from __future__ import annotations

from pathlib import Path

from trace_envs.rollout import EpisodeJob, Policy, make_jobs, policy_factory, rollout_into_store

ENV = "trace/order-cancel-v0"


def test_a_rerun_skips_the_finished_episodes_and_reports_the_store(tmp_path: Path) -> None:
    store = tmp_path / "runs.jsonl"
    jobs = make_jobs([ENV], range(3))
    pending: list[int] = []
    first = rollout_into_store(store, jobs, "oracle", spec="oracle", on_start=pending.append)
    assert first.run is not None and first.run.episodes == 3 and first.missing == 0
    again = rollout_into_store(store, [*jobs, *make_jobs([ENV], [3])], "oracle", spec="oracle", on_start=pending.append)
    assert pending == [3, 1]
    assert again.run is not None and (again.run.episodes, again.run.skipped) == (1, 3)
    assert (again.finished.episodes, again.wanted, again.finished.pass_rate) == (4, 4, 1.0)
    assert not again.interrupted and not again.all_failed


def test_failed_episodes_are_missing_from_the_store_but_in_the_overall_table(tmp_path: Path) -> None:
    factory, _ = policy_factory("oracle")

    def broken(job: EpisodeJob) -> Policy:
        policy = factory(job)
        if job.seed == 1:
            policy.act = lambda *_: (_ for _ in ()).throw(RuntimeError("boom"))  # type: ignore[method-assign]
        return policy

    result = rollout_into_store(tmp_path / "s.jsonl", make_jobs([ENV], range(2)), broken, spec="oracle")
    assert [r.seed for r in result.failed] == [1] and "boom" in str(result.failed[0].error)
    assert (result.missing, result.finished.episodes, result.overall().episodes, result.overall().failed) == (
        1,
        1,
        2,
        1,
    )
    assert not result.all_failed
