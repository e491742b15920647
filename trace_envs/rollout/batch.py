"""``run_rollouts``: the synchronous entry point of a rollout run, in this process (:mod:`.runner`) or
sharded over worker processes (:mod:`.workers`). It sits above both, so neither imports the other."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from .jobs import EpisodeJob, RolloutSummary
from .runner import PolicyFactory, arun_rollouts
from .workers import run_rollouts_in_workers


def run_rollouts(
    jobs: Sequence[EpisodeJob], policy: str | PolicyFactory, *, workers: int = 1, **options: Any
) -> RolloutSummary:
    """Synchronous :func:`arun_rollouts`; ``workers > 1`` shards the jobs over that many processes
    (:mod:`trace_envs.rollout.workers`: for when one process's CPU, not the endpoint, is the bound)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers > 1:
        if options.get("instructions"):
            raise ValueError("workers > 1 takes no instructions yet: run them in one process (workers=1)")
        options.pop("instructions", None)
        options.pop("on_interrupt", None)  # worker processes get Ctrl-C too: each stops where it is
        if not isinstance(policy, str):
            raise ValueError("workers > 1: pass the policy as a spec string (a policy factory cannot cross processes)")
        return run_rollouts_in_workers(jobs, policy, workers=workers, **options)
    return asyncio.run(arun_rollouts(jobs, policy, **options))
