"""Synthetic trajectories for ``sft-synthetic``: episodes rolled out on capability envs (resumable store),
and the successful ones as chat rows for TRL's ``SFTTrainer``.

The budget is episodes: ``budget`` episodes are rolled out in all (successful or not), spread over the
envs by largest remainder, each env's seeds counting up from ``first_seed``. A successful episode is
replayed through the TRL bridge, so its row has exactly the tools and messages a GRPO rollout of the
same actions has (tool calls as assistant ``tool_calls``, tool results and user replies as tool turns,
the last message to the user as the final plain assistant turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.rollout import (
    EpisodeJob,
    EpisodeRecord,
    TrajectoryStore,
    checked_policy_spec,
    iter_episodes,
    run_rollouts,
)
from trace_envs.training import trl_environment
from trace_envs.training.episodes import actions_conversation

from .mixture import allocate_groups

ROLLOUTS_FILE = "rollouts.jsonl"


class Collection(BaseModel):
    """The episodes one collection spent and the successful ones it keeps."""

    episodes: int = Field(description="Episodes rolled out for this budget (in this run or an earlier one).")
    successes: int = Field(description="Episodes the env scored a success.")
    rows: list[dict[str, Any]] = Field(
        default_factory=list, description="Chat rows {messages, tools} of the successes."
    )
    examples: list[EpisodeRecord] = Field(default_factory=list, description="The successful episodes, in job order.")
    dropped: int = Field(default=0, description="Successes whose replay through the bridge did not succeed.")


def collection_jobs(
    env_ids: Sequence[str], budget: int, first_seed: int = 0, knobs: dict[str, dict[str, Any]] | None = None
) -> list[EpisodeJob]:
    """``budget`` episodes over ``env_ids`` (uniform, by largest remainder), seeds from ``first_seed`` per env."""
    if budget < 1:
        raise ValueError(f"--budget must be a positive number of episodes, got {budget}")
    counts = allocate_groups(env_ids, [1.0] * len(env_ids), budget)
    knobs = knobs or {}
    return [
        EpisodeJob(env_id=env_id, seed=first_seed + k, env_kwargs=knobs.get(env_id, {}))
        for env_id, count in counts.items()
        for k in range(count)
    ]


def collect(
    jobs: Sequence[EpisodeJob],
    policy: str,
    out_dir: str | Path,
    *,
    concurrency: int = 16,
    model_options: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
) -> Collection:
    """Roll out ``jobs`` with ``policy`` into ``OUT/rollouts.jsonl`` (episodes already there are not run
    again) and return the successes as SFT rows."""
    spec = checked_policy_spec(policy, model_options)
    path = Path(out_dir) / ROLLOUTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with TrajectoryStore(path) as store:
        run_rollouts(jobs, policy, store=store, concurrency=concurrency, model_options=model_options, sampling=sampling)
    finished = {r.key: r for r in iter_episodes(path) if r.finished}
    records = [finished.get((j.env_id, j.seed, j.sample, spec)) for j in jobs]
    missing = [j for j, r in zip(jobs, records, strict=True) if r is None]
    if missing:
        raise RuntimeError(
            f"{len(missing)} of {len(jobs)} episodes failed (e.g. {missing[0].env_id} seed {missing[0].seed}); "
            f"see the error field in {path}, then run again to retry them"
        )
    successes = [r for r in records if r is not None and r.success]
    collection = Collection(episodes=len(jobs), successes=len(successes))
    classes = {
        env_id: trl_environment(env_id, **env_kwargs(jobs, env_id)) for env_id in dict.fromkeys(j.env_id for j in jobs)
    }
    for record in successes:
        episode = actions_conversation(classes[record.env_id], record.seed, record.actions)
        if episode["reward"] < 1.0:
            collection.dropped += 1
            continue
        collection.rows.append({"messages": episode["messages"], "tools": episode["tools"]})
        collection.examples.append(record)
    return collection


def env_kwargs(jobs: Sequence[EpisodeJob], env_id: str) -> dict[str, Any]:
    """The constructor options of ``env_id``'s jobs (the first job's; :func:`collection_jobs` gives one set per env)."""
    return next(dict(j.env_kwargs) for j in jobs if j.env_id == env_id)
