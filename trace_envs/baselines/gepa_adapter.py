"""GEPA's adapter over our rollouts: a candidate (capability name -> instruction text) is played as episodes
of our envs with the instructions in the policy's system prompt, through a resumable store per candidate,
scored by the env's verifier; every episode is taken from one hard rollout budget.

A data instance is an :class:`~trace_envs.rollout.EpisodeJob` (env id, seed, env options). Asking for
the same (candidate, env, seed) again plays a new sample, so a rerun of the same search finds each of
its episodes in the store instead of rolling it out again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gepa import EvaluationBatch
from gepa.core.adapter import ProposalFn

from trace_envs.llm import ChatModel
from trace_envs.rollout import (
    EpisodeJob,
    EpisodeRecord,
    RolloutSummary,
    TrajectoryStore,
    load_episodes,
    policy_factory,
    run_rollouts,
)

from .gepa_feedback import TRANSCRIPT_CHARS, reflection_example


class BudgetExceeded(RuntimeError):
    """More episodes were asked for than the rollout budget has left."""


class EpisodeBudget:
    """The rollout budget: every episode GEPA asks for is taken from it, and none past ``total``."""

    def __init__(self, total: int):
        if total < 1:
            raise ValueError(f"a rollout budget must be >= 1 episode, got {total}")
        self.total = total
        self.used = 0

    @property
    def remaining(self) -> int:
        return self.total - self.used

    def take(self, episodes: int) -> None:
        """Spend ``episodes``; a ``BudgetExceeded`` (nothing spent) when fewer are left."""
        if episodes > self.remaining:
            raise BudgetExceeded(
                f"{episodes} episodes asked for, but only {self.remaining} of the budget of {self.total} are left"
            )
        self.used += episodes


def render_instructions(candidate: Mapping[str, str]) -> str:
    """The instruction text a policy sees: a lone component's text, else each component's text under its
    name (in name order, so the text does not depend on dict order)."""
    if len(candidate) == 1:
        return next(iter(candidate.values())).strip()
    return "\n\n".join(f"{name}:\n{candidate[name].strip()}" for name in sorted(candidate) if candidate[name].strip())


def instructions_digest(instructions: str) -> str:
    """A short stable id of an instruction text (names its episode store)."""
    return hashlib.sha256(instructions.encode("utf-8")).hexdigest()[:16]


def episode_score(record: EpisodeRecord) -> float:
    """GEPA's score of an episode: the verifier's reward, 0 for a crashed episode."""
    return 0.0 if record.error is not None else float(record.reward)


class RolloutAdapter:
    """Implements GEPA's adapter protocol (``evaluate``, ``make_reflective_dataset``) with our rollouts.

    ``model`` is the task model's client, shared by every episode; ``sampling`` its sampling params.
    ``propose_new_texts`` is None so that GEPA proposes with its reflection model.
    """

    propose_new_texts: ProposalFn | None = None

    def __init__(
        self,
        model: ChatModel,
        *,
        episodes_dir: str | Path,
        budget: EpisodeBudget,
        sampling: dict[str, Any] | None = None,
        user_model: ChatModel | None = None,
        concurrency: int = 16,
        max_steps: int | None = None,
        transcript_chars: int = TRANSCRIPT_CHARS,
    ):
        self.model = model
        self.episodes_dir = Path(episodes_dir)
        self.budget = budget
        self.sampling = dict(sampling or {})
        self.user_model = user_model
        self.concurrency = concurrency
        self.max_steps = max_steps
        self.transcript_chars = transcript_chars
        self.played = RolloutSummary()
        """Totals of the episodes this process rolled out."""
        self.reused = 0
        """Episodes found finished in a store (an earlier, interrupted run of the same search)."""
        self.stores: dict[str, str] = {}
        """Instruction text by the digest that names its store."""
        self._samples: dict[tuple[str, str, int, str], int] = {}

    def store_path(self, digest: str) -> Path:
        return self.episodes_dir / f"{digest}.jsonl"

    def evaluate(
        self, batch: list[EpisodeJob], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[EpisodeRecord, dict[str, Any]]:
        """Play the candidate's instructions on every job of ``batch`` (one episode each, from the budget)."""
        instructions = render_instructions(candidate)
        digest = instructions_digest(instructions)
        self.budget.take(len(batch))
        self.stores[digest] = instructions
        records = self._play([self._numbered(job, digest) for job in batch], instructions, digest)
        outputs = [
            {"env_id": r.env_id, "seed": r.seed, "sample": r.sample, "reward": r.reward, "success": r.success}
            for r in records
        ]
        return EvaluationBatch(
            outputs=outputs,
            scores=[episode_score(r) for r in records],
            trajectories=records if capture_traces else None,
        )

    def make_reflective_dataset(
        self,
        candidate: dict[str, str],
        eval_batch: EvaluationBatch[EpisodeRecord, dict[str, Any]],
        components_to_update: list[str],
    ) -> dict[str, list[dict[str, Any]]]:
        """Per component, the episodes of its capability's envs (all episodes when none is), each as task,
        transcript and verdict in words."""
        records: Sequence[EpisodeRecord] = eval_batch.trajectories or []
        dataset: dict[str, list[dict[str, Any]]] = {}
        for component in components_to_update:
            own = [r for r in records if r.capability == component] or list(records)
            dataset[component] = [reflection_example(r, self.transcript_chars) for r in own]
        return dataset

    def _numbered(self, job: EpisodeJob, digest: str) -> EpisodeJob:
        """The job with the next unused sample index of its (candidate, env, seed, options)."""
        key = (digest, job.env_id, job.seed, json.dumps(job.env_kwargs, sort_keys=True, default=str))
        sample = self._samples.get(key, 0)
        self._samples[key] = sample + 1
        return job.model_copy(update={"sample": sample})

    def _play(self, jobs: list[EpisodeJob], instructions: str, digest: str) -> list[EpisodeRecord]:
        factory, spec = policy_factory(
            self.model.spec, model=self.model, sampling=self.sampling, instructions=instructions
        )
        path = self.store_path(digest)
        found: dict[tuple[str, int, int, str], EpisodeRecord] = {}

        def keep(record: EpisodeRecord) -> None:
            found[record.key] = record
            self.played.add(record)

        with TrajectoryStore(path) as store:
            summary = run_rollouts(
                jobs,
                factory,
                policy_spec=spec,
                store=store,
                concurrency=self.concurrency,
                max_steps=self.max_steps,
                user_model=self.user_model,
                on_episode=keep,
            )
        self.reused += summary.skipped
        wanted = {(j.env_id, j.seed, j.sample, spec) for j in jobs}
        if wanted - found.keys():  # finished by an earlier run of this search
            for record in load_episodes(path):
                if record.key in wanted:
                    found.setdefault(record.key, record)
        return [found[(j.env_id, j.seed, j.sample, spec)] for j in jobs]
