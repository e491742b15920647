"""Spot checks of a rollout run (:mod:`trace_envs.core.spot_checks`): which of its seeds are checked, playing
the checks between its episodes, and the errored records of an env once a check has stopped it.

Each env's first seed is checked before any of its episodes starts; the others (a share of its seeds, drawn
with the run's spot-check seed) as their episodes come up. Spot-check episodes are scripted, played on envs of
their own (never the run's, so none of their state reaches a real episode), and are not stored: the run's
summary counts them and names every env they stopped. A stopped env's remaining episodes are stored as errored
records naming the env and the seed, and the run goes on with the other envs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from random import Random
from typing import Any

import gymnasium as gym

from trace_envs.core import declares_capability
from trace_envs.core.spot_checks import SpotCheckFailure, chosen_seeds, fresh_spot_check_seed, spot_check

from .jobs import EpisodeJob
from .store import EpisodeRecord


class RunSpotChecks:
    """The spot checks of one run's ``jobs``: ``share`` of each env's seeds (and its first), drawn with ``seed``."""

    def __init__(self, jobs: Sequence[EpisodeJob], share: float, seed: int | None = None):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"spot_check_share: a share in [0, 1] is needed, got {share}")
        self.seed = fresh_spot_check_seed() if seed is None else seed
        self.played = 0
        self.stopped: dict[str, SpotCheckFailure] = {}
        self._jobs: dict[tuple[str, str], EpisodeJob] = {}
        seeds: dict[tuple[str, str], list[int]] = {}
        checked = {env_id: has_reference(env_id) for env_id in {job.env_id for job in jobs}}
        for job in jobs:
            if share <= 0 or not checked[job.env_id]:
                continue
            key = (job.env_id, repr(sorted(job.env_kwargs.items())))
            self._jobs.setdefault(key, job)
            if job.seed not in seeds.setdefault(key, []):
                seeds[key].append(job.seed)
        rng = Random(self.seed)
        self._due = {(key, seed) for key, env_seeds in seeds.items() for seed in chosen_seeds(env_seeds, share, rng)}
        self._first = [(key, env_seeds[0]) for key, env_seeds in seeds.items() if (key, env_seeds[0]) in self._due]

    async def first(self) -> None:
        """Check each env's first seed (before any of its episodes)."""
        for key, seed in self._first:
            await self._check(self._jobs[key], seed)

    async def before(self, job: EpisodeJob) -> SpotCheckFailure | None:
        """Play the check due on ``job``'s seed, if any; the failure that stopped its env, if one has."""
        if job.env_id not in self.stopped:
            await self._check(job, job.seed)
        return self.stopped.get(job.env_id)

    async def _check(self, job: EpisodeJob, seed: int) -> None:
        key = (job.env_id, repr(sorted(job.env_kwargs.items())))
        if (key, seed) not in self._due or job.env_id in self.stopped:
            return
        self._due.discard((key, seed))
        failure = await asyncio.to_thread(self._play, job, seed)
        self.played += 1
        if failure is not None:
            self.stopped.setdefault(job.env_id, failure)

    def _play(self, job: EpisodeJob, seed: int) -> SpotCheckFailure | None:
        """One check on an env of its own (its draws from a generator of its own: checks run concurrently)."""
        try:
            env: Any = gym.make(job.env_id, disable_env_checker=True, **job.env_kwargs)
        except Exception as exc:  # the env cannot even be made: its own episodes will say why
            return SpotCheckFailure(job.env_id, seed, "spot-check", f"could not be made: {type(exc).__name__}")
        try:
            return spot_check(env, job.env_id, seed, Random(f"{self.seed}/{job.env_id}/{seed}"))
        finally:
            env.close()


def has_reference(env_id: str) -> bool:
    """Whether ``env_id``'s class declares a capability (it has a reference solution to spot-check: a capability
    env, run here or boxed, or the device target), read from its registration without making one (a target env
    may load its data when made)."""
    import importlib

    try:
        entry = gym.spec(env_id).entry_point
        if isinstance(entry, str):
            module, _, name = entry.partition(":")
            entry = getattr(importlib.import_module(module), name)
    except Exception:  # not registered here, or its module fails: its own episodes will say why
        return False
    return declares_capability(entry)


def stopped_record(job: EpisodeJob, spec: str, failure: SpotCheckFailure) -> EpisodeRecord:
    """The stored record of an episode not played because a spot check stopped its env."""
    return EpisodeRecord(
        env_id=job.env_id, seed=job.seed, sample=job.sample, policy=spec, ended="error", error=failure.message
    )
