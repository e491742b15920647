"""What a rollout run is made of: the episodes to play (jobs), which of them a store still lacks, and
the totals of the episodes played. Plain data shared by the in-process loop and the worker processes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.llm.base import Usage
from trace_envs.registry.targets import TargetTask
from trace_envs.safe_text import shown

from .store import EpisodeKey, EpisodeRecord, TrajectoryStore, load_episodes


class EpisodeJob(BaseModel):
    """One episode to run: which env (and its constructor options), which seed, which repeat, and the
    ``options`` its ``reset`` gets (e.g. a tau2 target's ``task_id``: envs are then shared across tasks)."""

    env_id: str
    seed: int
    sample: int = 0
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    reset_options: dict[str, Any] = Field(default_factory=dict)


def make_jobs(env_ids: Sequence[str], seeds: Iterable[int], samples: int = 1) -> list[EpisodeJob]:
    """Every (env, seed, sample) combination, env-major."""
    seed_list = list(seeds)
    return [EpisodeJob(env_id=e, seed=s, sample=k) for e in env_ids for s in seed_list for k in range(samples)]


def task_jobs(tasks: Iterable[TargetTask], samples: int = 1) -> list[EpisodeJob]:
    """One job per (target task, sample): the task's env, kwargs, reset options and seed, the sample index as
    the repeat. The one conversion rollout and evaluation share, so both play a task as the same episode."""
    return [
        EpisodeJob(env_id=t.env_id, seed=t.seed, sample=k, env_kwargs=t.env_kwargs, reset_options=t.reset_options)
        for t in tasks
        for k in range(samples)
    ]


class RolloutSummary(BaseModel):
    """Totals of one rollout run (the episodes it ran, not the ones it skipped)."""

    episodes: int = 0
    skipped: int = 0
    failed: int = 0
    successes: int = 0
    reward_sum: float = 0.0
    steps: int = 0
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = 0.0
    per_env: dict[str, dict[str, float]] = Field(default_factory=dict)
    spot_checks: int = Field(default=0, description="Spot checks played (each: oracle, junk and flawed episodes).")
    spot_check_seed: int | None = Field(default=None, description="The seed that drew the spot-checked seeds.")
    stopped: dict[str, str] = Field(
        default_factory=dict, description="Envs a spot check stopped, each with the one-line reason (env and seed)."
    )

    @property
    def pass_rate(self) -> float:
        finished = self.episodes - self.failed
        return self.successes / finished if finished else 0.0

    @property
    def mean_reward(self) -> float:
        finished = self.episodes - self.failed
        return self.reward_sum / finished if finished else 0.0

    def add(self, record: EpisodeRecord) -> None:
        self.episodes += 1
        self.steps += record.num_steps
        self.usage = self.usage + record.usage + record.user_usage
        row = self.per_env.setdefault(
            record.env_id, {"episodes": 0, "failed": 0, "successes": 0, "reward_sum": 0.0, "tokens": 0}
        )
        row["episodes"] += 1
        row["tokens"] += record.usage.input_tokens + record.usage.output_tokens
        if record.error is not None:
            self.failed += 1
            row["failed"] += 1
            return
        self.successes += int(record.success)
        self.reward_sum += record.reward
        row["successes"] += int(record.success)
        row["reward_sum"] += record.reward

    @classmethod
    def of_store(cls, path: str | Path, jobs: Sequence[EpisodeJob], spec: str) -> RolloutSummary:
        """Totals of the finished episodes a store holds of ``jobs`` played by ``spec`` (earlier runs' included):
        what a rollout command and the pipeline report once a run is over."""
        wanted = {(j.env_id, j.seed, j.sample, spec) for j in jobs}
        summary = cls()
        for record in load_episodes(path):
            if record.key in wanted:
                summary.add(record)
        return summary


def pending_jobs(jobs: Sequence[EpisodeJob], spec: str, store: TrajectoryStore | None) -> list[EpisodeJob]:
    """The jobs ``store`` has no finished episode of (all of them without a store); opening the
    store first repairs a torn last line."""
    if store is None:
        return list(jobs)
    store.open()
    done: set[EpisodeKey] = store.finished_keys()
    return [j for j in jobs if (j.env_id, j.seed, j.sample, spec) not in done]


def first_errors(records: Iterable[EpisodeRecord], limit: int = 3) -> tuple[list[str], int]:
    """One line per distinct error of failed episodes (its first line, where it happened first and how many
    more had it), at most ``limit``, and how many other distinct errors there were: so that a run where every
    episode failed says why (a refused connection, a missing file) instead of only how many."""
    seen: dict[str, list[EpisodeRecord]] = {}
    for record in records:
        if record.error is not None:
            text = str(record.error)
            seen.setdefault(shown(text.split("\n", 1)[0]), []).append(record)
    lines = []
    for message, failed in list(seen.items())[:limit]:
        more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
        lines.append(f"{failed[0].env_id} seed {failed[0].seed}{more}: {message}")
    return lines, max(0, len(seen) - limit)
