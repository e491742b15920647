"""The agent loop: play a policy (scripted or model-backed) on any env of ours and record the episode;
run many episodes concurrently (asyncio, bounded) against one endpoint, appending each finished
episode to a :class:`TrajectoryStore` and skipping the ones a previous run finished.

Envs are cheap pure Python, so env steps run in the event loop; model calls are awaited. Envs whose
user is an :class:`LLMUser` (blocking model calls inside ``step``) are stepped in worker threads.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import gymnasium as gym
from pydantic import BaseModel, Field

from trace_envs.llm.base import ChatModel, Usage
from trace_envs.llm.client import SAMPLE_INDEX, MeteredModel, aclose_models, closing_connections
from trace_envs.llm.errors import AuthenticationFailed

from .llm_user import LLMUser, episode_user, use_llm_user
from .policy import Policy
from .store import EpisodeKey, EpisodeRecord, Timings, ToolCallRecord, TrajectoryStore


class EpisodeJob(BaseModel):
    """One episode to run: which env (and its constructor options), which seed, which repeat."""

    env_id: str
    seed: int
    sample: int = 0
    env_kwargs: dict[str, Any] = Field(default_factory=dict)


def make_jobs(env_ids: Sequence[str], seeds: Iterable[int], samples: int = 1) -> list[EpisodeJob]:
    """Every (env, seed, sample) combination, env-major."""
    seed_list = list(seeds)
    return [EpisodeJob(env_id=e, seed=s, sample=k) for e in env_ids for s in seed_list for k in range(samples)]


def has_model_user(env: gym.Env[Any, Any]) -> bool:
    """Whether the env's user is played by a model (its steps then block on requests)."""
    inner = env.unwrapped
    if getattr(inner, "user_model", None) is not None or getattr(inner, "llm_user_model", None) is not None:
        return True
    return isinstance(episode_user(env), LLMUser)


def accepts_user_model(env_id: str) -> bool:
    """Whether the env's constructor takes ``user_model`` (target envs with an LLM user do)."""
    import importlib
    import inspect

    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
    try:
        return "user_model" in inspect.signature(entry).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _tool_call_records(messages: list[dict[str, Any]]) -> list[ToolCallRecord]:
    records: list[ToolCallRecord] = []
    by_id: dict[str, ToolCallRecord] = {}
    step = -1
    for message in messages:
        if message.get("role") == "assistant":
            step += 1
            for call in message.get("tool_calls") or []:
                record = ToolCallRecord(
                    step=step, id=call.get("id", ""), name=call["name"], arguments=call.get("arguments", {})
                )
                records.append(record)
                by_id[record.id] = record
        elif message.get("role") == "tool":
            target = by_id.get(message.get("id", ""))
            if target is not None:
                target.result = message.get("content")
                target.error = bool(message.get("error"))
    return records


async def arun_episode(
    env: gym.Env[Any, Any],
    policy: Policy,
    *,
    env_id: str,
    seed: int,
    sample: int = 0,
    max_steps: int | None = None,
    step_in_thread: bool | None = None,
) -> EpisodeRecord:
    """Reset ``env`` with ``seed``, play ``policy`` until the episode ends, return its record.

    A model error (after the client's retries) or an env exception ends the episode with ``error``
    set (it is run again on resume); an authentication failure is raised, since no episode can
    succeed without credentials.
    """
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.perf_counter()
    policy_s = env_s = 0.0
    messages: list[dict[str, Any]] = []
    actions: list[str] = []
    info: dict[str, Any] = {}
    reward_total, terminated, truncated, ended, error = 0.0, False, False, None, None
    reset_info: dict[str, Any] = {}
    meter = getattr(env.unwrapped, "user_model", None)
    if isinstance(meter, MeteredModel):
        meter.reset()
    sample_token = SAMPLE_INDEX.set(sample)
    try:
        threaded = step_in_thread if step_in_thread is not None else has_model_user(env)
        if threaded:
            observation, reset_info = await asyncio.to_thread(env.reset, seed=seed)
        else:
            observation, reset_info = env.reset(seed=seed)
        messages = list(reset_info.get("messages") or [{"role": "user", "content": observation}])
        policy.reset(env, observation, reset_info)
        info = reset_info
        aact = getattr(policy, "aact", None)
        while True:
            tick = time.perf_counter()
            action = await aact(observation, info) if aact is not None else policy.act(observation, info)
            tock = time.perf_counter()
            policy_s += tock - tick
            actions.append(action)
            if threaded:
                observation, reward, terminated, truncated, info = await asyncio.to_thread(env.step, action)
            else:
                observation, reward, terminated, truncated, info = env.step(action)
            env_s += time.perf_counter() - tock
            reward_total += float(reward)
            step_messages = info.get("messages")
            if step_messages is None:
                step_messages = [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
            messages.extend(step_messages)
            if terminated or truncated:
                ended = info.get("ended") or ("terminated" if terminated else "truncated")
                break
            if max_steps is not None and len(actions) >= max_steps:
                truncated, ended = True, "max_steps"
                break
    except AuthenticationFailed:
        raise
    except Exception as exc:  # one broken episode must not stop a batch; it is recorded and rerun later
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
        ended = "error"
    finally:
        SAMPLE_INDEX.reset(sample_token)
    verdict = info.get("verdict") or info.get("evaluation") or {}
    user = episode_user(env)
    usage = getattr(policy, "usage", None)
    model = getattr(policy, "model", None)
    user_model = getattr(user, "model", None)
    user_usage = meter.usage if isinstance(meter, MeteredModel) else getattr(user, "usage", None)
    return EpisodeRecord(
        env_id=env_id,
        seed=seed,
        sample=sample,
        task_id=reset_info.get("task_id"),
        capability=reset_info.get("capability"),
        policy=policy.spec,
        model=model.spec if model is not None else None,
        user_model=user_model.spec if user_model is not None else None,
        messages=messages,
        tool_calls=_tool_call_records(messages),
        actions=actions,
        reward=reward_total,
        success=bool(verdict.get("success", error is None and terminated and reward_total >= 1.0)),
        terminated=terminated,
        truncated=truncated,
        ended=ended,
        num_steps=len(actions),
        components={k: float(v) for k, v in (verdict.get("components") or {}).items()},
        verdict=verdict,
        usage=usage if isinstance(usage, Usage) else Usage(),
        user_usage=user_usage if isinstance(user_usage, Usage) else Usage(),
        timings=Timings(started_at=started_at, wall_s=time.perf_counter() - start, policy_s=policy_s, env_s=env_s),
        error=error,
    )


def run_episode(env: gym.Env[Any, Any], policy: Policy, **options: Any) -> EpisodeRecord:
    """Synchronous :func:`arun_episode` (runs its own event loop, and closes the policy model's
    connections of that loop when the episode ends)."""

    async def run() -> EpisodeRecord:
        async with closing_connections(getattr(policy, "model", None)):
            return await arun_episode(env, policy, **options)

    return asyncio.run(run())


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


PolicyFactory = Callable[[EpisodeJob], Policy]


def policy_factory(
    spec: str,
    *,
    model_options: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
    model: ChatModel | None = None,
) -> tuple[PolicyFactory, str]:
    """A per-episode policy factory for a spec, sharing one model client across episodes; returns
    (factory, recorded policy spec)."""
    from trace_envs.llm.spec import is_model_spec

    from .chat_policy import ChatPolicy
    from .policy import make_policy, scripted_policy

    if model is not None or is_model_spec(spec):
        if model is None:
            from trace_envs.llm.factory import make_chat_model

            model = make_chat_model(spec, **(model_options or {}))
        shared = model

        def chat_policy(job: EpisodeJob) -> Policy:
            return ChatPolicy(shared, sampling)

        chat_policy.model = shared  # type: ignore[attr-defined]
        return chat_policy, shared.spec
    make_policy(spec)  # validate the spec (and its capability names) now, not in every episode
    return (lambda job: scripted_policy(spec, seed=job.seed + 1_000_003 * job.sample)), spec


def checked_policy_spec(policy: str, model_options: dict[str, Any] | None = None) -> str:
    """The spec a policy's records carry, validated without building the model (an hf model would
    load its weights for nothing in a process that only hands the spec to workers), API key included."""
    from trace_envs.llm.spec import ModelConfig, is_model_spec

    from .policy import make_policy

    if is_model_spec(policy):
        config = ModelConfig.parse(policy, **(model_options or {}))
        config.check_api_key()
        return config.spec
    make_policy(policy)
    return policy


def pending_jobs(jobs: Sequence[EpisodeJob], spec: str, store: TrajectoryStore | None) -> list[EpisodeJob]:
    """The jobs ``store`` has no finished episode of (all of them without a store); opening the
    store first repairs a torn last line."""
    if store is None:
        return list(jobs)
    store.open()
    done: set[EpisodeKey] = store.finished_keys()
    return [j for j in jobs if (j.env_id, j.seed, j.sample, spec) not in done]


async def arun_rollouts(
    jobs: Sequence[EpisodeJob],
    policy: str | PolicyFactory,
    *,
    store: TrajectoryStore | None = None,
    concurrency: int = 16,
    max_steps: int | None = None,
    policy_spec: str | None = None,
    model_options: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
    user_model: ChatModel | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> RolloutSummary:
    """Run ``jobs`` with at most ``concurrency`` episodes in flight, appending each finished episode
    to ``store`` (if given) as soon as it ends; jobs the store already finished are skipped.

    ``policy`` is a spec string (scripted or model) or a factory ``job -> Policy`` (then give
    ``policy_spec``, the spec its records carry, for resume to match).
    """
    owned: list[Any] = [user_model] if user_model is not None else []
    if isinstance(policy, str):
        factory, spec = policy_factory(policy, model_options=model_options, sampling=sampling)
    else:
        if policy_spec is None:
            raise ValueError("arun_rollouts: pass policy_spec (the spec recorded per episode) with a policy factory")
        factory, spec = policy, policy_spec
    owned.append(getattr(factory, "model", None))
    summary = RolloutSummary()
    pending = pending_jobs(jobs, spec, store)
    summary.skipped = len(jobs) - len(pending)
    idle_envs: dict[tuple[str, str], list[gym.Env[Any, Any]]] = {}
    queue: asyncio.Queue[EpisodeJob] = asyncio.Queue()
    for job in pending:
        queue.put_nowait(job)
    start = time.perf_counter()

    def take_env(job: EpisodeJob) -> gym.Env[Any, Any]:
        pool = idle_envs.setdefault((job.env_id, repr(sorted(job.env_kwargs.items()))), [])
        if pool:
            return pool.pop()
        if user_model is not None and accepts_user_model(job.env_id):
            metered = MeteredModel(user_model)  # one per env instance: its usage is this env's episode's
            return gym.make(job.env_id, disable_env_checker=True, user_model=metered, **job.env_kwargs)
        env = gym.make(job.env_id, disable_env_checker=True, **job.env_kwargs)
        if user_model is not None:
            use_llm_user(env, user_model)
        return env

    async def worker() -> None:
        while True:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            env = take_env(job)
            record = await arun_episode(
                env, factory(job), env_id=job.env_id, seed=job.seed, sample=job.sample, max_steps=max_steps
            )
            if record.policy != spec:
                record = record.model_copy(update={"policy": spec})
            if job.env_kwargs:
                record.metadata["env_kwargs"] = job.env_kwargs
            idle_envs[(job.env_id, repr(sorted(job.env_kwargs.items())))].append(env)
            if store is not None:
                store.append(record)
            summary.add(record)
            if on_episode is not None:
                on_episode(record)
            await asyncio.sleep(0)  # scripted episodes never wait: let Ctrl-C's cancellation in between them

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, len(pending)))):
                group.create_task(worker())
    except BaseExceptionGroup as failure:  # e.g. AuthenticationFailed: stop every worker, raise the cause
        raise failure.exceptions[0] from None
    finally:
        for pool in idle_envs.values():
            for env in pool:
                env.close()
        await aclose_models(*owned)  # this loop's HTTP connections die with it
    summary.wall_s = time.perf_counter() - start
    return summary


def run_rollouts(
    jobs: Sequence[EpisodeJob], policy: str | PolicyFactory, *, workers: int = 1, **options: Any
) -> RolloutSummary:
    """Synchronous :func:`arun_rollouts`; ``workers > 1`` shards the jobs over that many processes
    (:mod:`trace_envs.rollout.workers`: for when one process's CPU, not the endpoint, is the bound)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers > 1:
        if not isinstance(policy, str):
            raise ValueError("workers > 1: pass the policy as a spec string (a policy factory cannot cross processes)")
        from .workers import run_rollouts_in_workers

        return run_rollouts_in_workers(jobs, policy, workers=workers, **options)
    return asyncio.run(arun_rollouts(jobs, policy, **options))
