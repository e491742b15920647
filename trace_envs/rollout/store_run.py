"""``rollout_into_store``: one rollout run appended to a trajectory store, and the summary both the ``rollout``
command and the pipeline's rollout stage report from it (this run's totals, the store's totals of the jobs
with earlier runs' episodes, the episodes that failed), so neither rebuilds it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .batch import run_rollouts
from .jobs import EpisodeJob, RolloutSummary, pending_jobs
from .runner import PolicyFactory
from .store import EpisodeRecord, TrajectoryStore


@dataclass
class StoreRollout:
    """What a rollout run into a store leaves: ``run`` is this run's totals (None when Ctrl-C stopped it),
    ``finished`` the store's finished episodes of the jobs (earlier runs' included), ``failed`` this run's
    failed episodes (run again on resume) and ``wanted`` how many distinct episodes the jobs ask for."""

    path: Path
    spec: str
    run: RolloutSummary | None
    finished: RolloutSummary
    wanted: int
    failed: list[EpisodeRecord] = field(default_factory=list)

    @property
    def interrupted(self) -> bool:
        return self.run is None

    @property
    def missing(self) -> int:
        """Episodes the jobs ask for that the store has no finished record of."""
        return self.wanted - self.finished.episodes

    @property
    def all_failed(self) -> bool:
        """Whether this run played episodes and every one of them failed."""
        return self.run is not None and self.run.episodes > 0 and self.run.failed == self.run.episodes

    def overall(self) -> RolloutSummary:
        """The store's finished episodes plus this run's failed ones: the table a rollout run prints."""
        overall = self.finished.model_copy(deep=True)
        for record in self.failed:
            overall.add(record)
        return overall


def rollout_into_store(
    path: str | Path,
    jobs: Sequence[EpisodeJob],
    policy: str | PolicyFactory,
    *,
    spec: str,
    on_start: Callable[[int], None] | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    keep_interrupted: bool = False,
    **options: Any,
) -> StoreRollout:
    """Run ``jobs`` with ``policy`` (a spec string, or a factory whose records carry ``spec``) into the store at
    ``path``, skipping the episodes it already finished; ``on_start`` gets how many are pending once the store
    is open. With ``keep_interrupted``, Ctrl-C ends the run with ``run=None`` (the finished episodes are kept)
    instead of raising. ``options`` go to :func:`run_rollouts` (``workers``, ``concurrency``, ``user_model``...)."""
    failed: list[EpisodeRecord] = []

    def record(episode: EpisodeRecord) -> None:
        if episode.error is not None:
            failed.append(episode)
        if on_episode is not None:
            on_episode(episode)

    if not isinstance(policy, str):
        options["policy_spec"] = spec
    run: RolloutSummary | None
    with TrajectoryStore(path) as store:
        if on_start is not None:
            on_start(len(pending_jobs(jobs, spec, store)))
        try:
            run = run_rollouts(jobs, policy, store=store, on_episode=record, **options)
        except (
            KeyboardInterrupt
        ):  # the episodes that were in flight finished into the store (a second Ctrl-C drops them)
            if not keep_interrupted:
                raise
            run = None
    wanted = len({(j.env_id, j.seed, j.sample) for j in jobs})
    finished = RolloutSummary.of_store(path, jobs, spec)
    return StoreRollout(Path(path), spec, run, finished, wanted, failed)
