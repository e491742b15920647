"""Policies (scripted and model-backed), the agent loop that plays them in envs, and the trajectory store.

from trace_envs.rollout import make_jobs, run_rollouts, TrajectoryStore
with TrajectoryStore("runs/x.jsonl") as store:
    run_rollouts(make_jobs(["trace/order-cancel-v0"], range(8)), "oracle", store=store)
"""

from .batch import run_rollouts
from .chat_policy import ChatPolicy
from .instructions import INSTRUCTIONS_TAG, instructions_block, with_instructions
from .jobs import EpisodeJob, RolloutSummary, first_errors, make_jobs, task_jobs
from .policy import AsyncPolicy, Policy, make_policy
from .policy_spec import POLICY_SPEC_FORMS, PolicySpec
from .runner import arun_episode, arun_rollouts, checked_policy_spec, policy_factory, run_episode
from .scripted import FlawedPolicy, NoopPolicy, OraclePolicy, RandomPolicy, ScriptedPolicy, play_actions
from .store import (
    FORMAT,
    EpisodeRecord,
    StoreWarning,
    Timings,
    ToolCallRecord,
    TrajectoryStore,
    episode_row,
    episodes_dataset,
    episodes_frame,
    iter_episodes,
    load_episodes,
)
from .store_run import StoreRollout, rollout_into_store

__all__ = [
    "FORMAT",
    "INSTRUCTIONS_TAG",
    "POLICY_SPEC_FORMS",
    "AsyncPolicy",
    "ChatPolicy",
    "EpisodeJob",
    "EpisodeRecord",
    "FlawedPolicy",
    "NoopPolicy",
    "OraclePolicy",
    "Policy",
    "PolicySpec",
    "RandomPolicy",
    "RolloutSummary",
    "ScriptedPolicy",
    "StoreRollout",
    "StoreWarning",
    "Timings",
    "ToolCallRecord",
    "TrajectoryStore",
    "arun_episode",
    "arun_rollouts",
    "checked_policy_spec",
    "episode_row",
    "episodes_dataset",
    "episodes_frame",
    "first_errors",
    "instructions_block",
    "iter_episodes",
    "load_episodes",
    "make_jobs",
    "make_policy",
    "play_actions",
    "policy_factory",
    "rollout_into_store",
    "run_episode",
    "run_rollouts",
    "task_jobs",
    "with_instructions",
]
