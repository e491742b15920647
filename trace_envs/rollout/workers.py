"""Rollouts across worker processes: with hundreds of episodes in flight against a fast endpoint,
one Python process is bound by its own CPU (the SDK's HTTP stack costs about a millisecond per
request), so ``run_rollouts(..., workers=N)`` shards the pending jobs by task (env, seed and env options: all
samples or trials of a task in one shard; by episode when there are fewer tasks than workers) over N spawned processes, each
running the asyncio loop with its share of the concurrency. Workers append to the same store (each
append holds an exclusive ``flock``) and send every finished record back to the parent for the
summary and ``on_episode``; resume works exactly as with one process.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import queue
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from pydantic import BaseModel

from trace_envs.core.spot_checks import DEFAULT_SPOT_CHECK_SHARE
from trace_envs.llm.errors import AuthenticationFailed
from trace_envs.registry.sources import loaded_folders

from .jobs import EpisodeJob, RolloutSummary, pending_jobs
from .runner import arun_rollouts, checked_policy_spec
from .store import EpisodeRecord, FsyncMode, TrajectoryStore

POLL_S = 0.2
_REGISTER_FIELDS = (
    "id", "entry_point", "reward_threshold", "nondeterministic", "max_episode_steps", "order_enforce",
    "disable_env_checker", "kwargs", "additional_wrappers", "vector_entry_point",
)  # fmt: skip
"""The ``EnvSpec`` fields ``gym.register`` takes: workers re-register envs the parent registered at
run time (e.g. a user's own env), since a spawned process only has the ones ``import trace_envs`` registers
(a boxed id's class pickles as the text its boxes run; folders of your own loaded with ``load_envs(folder,
boxed=False)`` are imported again in the worker, so their modules exist there)."""


class WorkerFailed(RuntimeError):
    """A worker process failed or died; ``details`` holds its traceback (if it could send one)."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class WorkerPlan(BaseModel):
    """What one worker process runs (everything crosses the process boundary as plain data)."""

    index: int
    jobs: list[EpisodeJob]
    policy: str
    concurrency: int
    max_steps: int | None = None
    model_options: dict[str, Any] | None = None
    sampling: dict[str, Any] | None = None
    user_model: dict[str, Any] | None = None
    env_folders: list[str] = []
    """Folders of your own the parent imported with ``load_envs(folder, boxed=False)``: the worker does too."""
    store_path: str | None = None
    fsync: FsyncMode = "background"
    spot_check_share: float = DEFAULT_SPOT_CHECK_SHARE
    spot_check_seed: int | None = None


def _worker(plan_json: str, env_specs: dict[str, Any], results: Any) -> None:
    """A worker's body: register the parent's env specs, run its shard, report each record."""
    plan = WorkerPlan.model_validate_json(plan_json)
    try:
        import trace_envs  # registers the built-in envs, the plugins' and $TRACE_ENVS_PATH's
        from trace_envs.registry import env_class

        for folder in plan.env_folders:
            trace_envs.load_envs(folder, boxed=False)
        for env_id, spec in env_specs.items():
            if env_id not in gym.registry:
                gym.register(**{k: v for k, v in vars(spec).items() if k in _REGISTER_FIELDS})
            env_class(env_id)  # import its module now, as the parent had (a user's flawed:<capability> needs it)
        user_model = None
        if plan.user_model is not None:
            from trace_envs.llm import ModelConfig, make_chat_model

            user_model = make_chat_model(ModelConfig.model_validate(plan.user_model))
        store = TrajectoryStore(plan.store_path, fsync=plan.fsync) if plan.store_path else None
        try:
            asyncio.run(arun_rollouts(
                plan.jobs, plan.policy, store=store, concurrency=plan.concurrency, max_steps=plan.max_steps,
                model_options=plan.model_options, sampling=plan.sampling, user_model=user_model,
                on_episode=lambda record: results.put(("record", record.model_dump_json())),
                spot_check_share=plan.spot_check_share, spot_check_seed=plan.spot_check_seed,
            ))  # fmt: skip
        finally:
            if store is not None:
                store.close()
    except AuthenticationFailed as exc:
        results.put(("auth", str(exc)))
    except BaseException as exc:  # reported to the parent, which stops the run with it
        results.put(("failed", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"))
    else:
        results.put(("done", plan.index))


def _user_model_config(user_model: Any) -> dict[str, Any] | None:
    if user_model is None:
        return None
    config = getattr(user_model, "config", None)
    if config is None or not hasattr(config, "model_dump"):
        raise ValueError(
            "workers > 1: the user model must be a client built by make_chat_model (it is rebuilt from its "
            f"ModelConfig in every worker); got {type(user_model).__name__}"
        )
    return dict(config.model_dump())


def run_rollouts_in_workers(
    jobs: Sequence[EpisodeJob],
    policy: str,
    *,
    workers: int,
    store: TrajectoryStore | None = None,
    concurrency: int = 16,
    max_steps: int | None = None,
    model_options: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
    user_model: Any = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    spot_check_share: float = DEFAULT_SPOT_CHECK_SHARE,
    spot_check_seed: int | None = None,
) -> RolloutSummary:
    """:func:`~trace_envs.rollout.run_rollouts` over ``workers`` spawned processes (see the module
    docstring). ``policy`` must be a spec string; ``user_model`` a client from ``make_chat_model``; each worker
    spot-checks its own shard with ``spot_check_share`` and ``spot_check_seed``."""
    spec = checked_policy_spec(policy, model_options)
    user_config = _user_model_config(user_model)
    summary = RolloutSummary()
    pending = pending_jobs(jobs, spec, store)
    summary.skipped = len(jobs) - len(pending)
    shards = [shard for shard in shard_by_task(pending, workers) if shard]
    start = time.perf_counter()
    if not shards:
        return summary
    folders = loaded_folders({job.env_id for job in pending}, boxed=False)  # imported here: there too
    env_specs = {job.env_id: gym.spec(job.env_id) for job in pending}  # a boxed class pickles as its text
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = []
    for index, shard in enumerate(shards):
        plan = WorkerPlan(
            index=index, jobs=shard, policy=policy, concurrency=max(1, math.ceil(concurrency / len(shards))),
            max_steps=max_steps, model_options=model_options, sampling=sampling, user_model=user_config,
            env_folders=folders, store_path=str(store.path) if store is not None else None,
            fsync=store.fsync if store is not None else "background",
            spot_check_share=spot_check_share, spot_check_seed=spot_check_seed,
        )  # fmt: skip
        process = context.Process(
            target=_worker, args=(plan.model_dump_json(), env_specs, results), name=f"rollout-worker-{index}"
        )
        process.start()
        processes.append(process)
    try:
        _collect(results, processes, summary, on_episode)
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join(timeout=10)
    summary.wall_s = time.perf_counter() - start
    return summary


def shard_by_task(jobs: Sequence[EpisodeJob], workers: int) -> list[list[EpisodeJob]]:
    """``workers`` shards of ``jobs``: tasks (env id, seed, env options) dealt round-robin in order of first
    appearance, each task's episodes together; episodes dealt one by one when there are fewer tasks than workers."""
    tasks = list(dict.fromkeys(_task_key(job) for job in jobs))
    if len(tasks) < workers:
        return [list(jobs[index::workers]) for index in range(workers)]
    shard_of = {task: index % workers for index, task in enumerate(tasks)}
    shards: list[list[EpisodeJob]] = [[] for _ in range(workers)]
    for job in jobs:
        shards[shard_of[_task_key(job)]].append(job)
    return shards


def _task_key(job: EpisodeJob) -> tuple[str, int, str]:
    return job.env_id, job.seed, repr(sorted(job.env_kwargs.items()))


def _collect(
    results: Any,
    processes: list[Any],
    summary: RolloutSummary,
    on_episode: Callable[[EpisodeRecord], None] | None,
) -> None:
    """Read the workers' messages until every worker is done; raise the first failure."""
    finished: set[int] = set()
    while len(finished) < len(processes):
        try:
            kind, payload = results.get(timeout=POLL_S)
        except queue.Empty:
            for index, process in enumerate(processes):
                if index not in finished and not process.is_alive() and results.empty():
                    raise WorkerFailed(
                        f"rollout worker {index} exited with code {process.exitcode} without finishing; the "
                        "episodes it finished are in the store, and rerunning the same command resumes"
                    ) from None
            continue
        if kind == "record":
            record = EpisodeRecord.model_validate_json(payload)
            summary.add(record)
            if on_episode is not None:
                on_episode(record)
        elif kind == "done":
            finished.add(int(payload))
        elif kind == "auth":
            raise AuthenticationFailed(payload)
        else:
            raise WorkerFailed(f"a rollout worker failed: {payload.splitlines()[0]}", details=payload)
