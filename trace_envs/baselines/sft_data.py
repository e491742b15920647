"""Synthetic trajectories for ``sft-synthetic``: episodes rolled out on capability envs (resumable store),
and the successful ones as chat rows for TRL's ``SFTTrainer``.

The budget is episodes: ``budget`` episodes are rolled out in all (successful or not), spread over the
envs by largest remainder, each env's seeds counting up from ``first_seed``. A successful episode becomes a
row in one of two forms (:data:`RowFormat`). ``grpo``, the default: replayed through the TRL bridge, the row
has exactly the tools and messages a GRPO rollout of the same actions has (tool calls as assistant
``tool_calls``, tool results and user replies as tool turns, the last message to the user as the final plain
assistant turn). ``inference``: the conversation as the rollout showed it to the agent, with the tools the env
offered; the warm-up trains on this form, because the agent it makes is played by rollouts and evaluations.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

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
RowFormat = Literal["grpo", "inference"]
"""How a successful episode becomes a chat row: as a GRPO rollout of its actions sees it (messages to the user are
``send_message_to_user`` calls and the user's replies their results; the tools are every tool of the env's TRL
class), or as a rollout showed it to the agent (user turns are user messages; the tools are those the env offered
on that seed, as the ``hf:`` client renders them)."""


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
    row_format: RowFormat = "grpo",
) -> Collection:
    """Roll out ``jobs`` with ``policy`` into ``OUT/rollouts.jsonl`` (episodes already there are not run
    again) and return the successes as SFT rows in ``row_format``."""
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
    if row_format == "inference":
        by_key = {(j.env_id, j.seed, j.sample): j for j in jobs}
        collection.rows = [inference_row(by_key[r.env_id, r.seed, r.sample], r) for r in successes]
        collection.examples = successes
        return collection
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


def inference_row(job: EpisodeJob, record: EpisodeRecord) -> dict[str, Any]:
    """A stored episode as the rollout showed it to the agent: its conversation up to the agent's last turn, in
    the form the ``hf:`` client renders (:func:`~trace_envs.llm.hf_client.to_hf`), and the tools the env offered
    on the episode's seed."""
    import gymnasium as gym

    from trace_envs.llm.hf_client import to_hf

    env = gym.make(job.env_id, **job.env_kwargs)
    try:
        _, info = env.reset(seed=job.seed)
    finally:
        env.close()
    messages = to_hf(record.messages)
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return {"messages": messages[: last + 1], "tools": list(info.get("tools") or [])}


def env_kwargs(jobs: Sequence[EpisodeJob], env_id: str) -> dict[str, Any]:
    """The constructor options of ``env_id``'s jobs (the first job's; :func:`collection_jobs` gives one set per env)."""
    return next(dict(j.env_kwargs) for j in jobs if j.env_id == env_id)
