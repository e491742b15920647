"""The agent loop: play a policy (scripted or model-backed) on any env of ours and record the episode;
run many episodes concurrently in one process (asyncio, bounded) against one endpoint, appending each
finished episode to a :class:`TrajectoryStore` and skipping the ones a previous run finished.

Envs are cheap pure Python, so env steps run in the event loop; model calls are awaited. Envs whose
user is an :class:`LLMUser` (blocking model calls inside ``step``) are stepped in worker threads.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import gymnasium as gym

from trace_envs.core import CapabilityEnv
from trace_envs.llm.base import ChatModel, Usage
from trace_envs.llm.client import SAMPLE_INDEX, MeteredModel, aclose_models, closing_connections
from trace_envs.llm.errors import AuthenticationFailed
from trace_envs.llm_user import LLMUser

from .instructions import with_instructions
from .jobs import EpisodeJob, RolloutSummary, pending_jobs
from .policy import Policy
from .policy_spec import PolicySpec
from .store import EpisodeRecord, Timings, ToolCallRecord, TrajectoryStore


def episode_user(env: gym.Env[Any, Any]) -> Any:
    """The current user object of an env (``None`` if it has none)."""
    return getattr(env.unwrapped, "user", None)


def has_model_user(env: gym.Env[Any, Any]) -> bool:
    """Whether the env's user is played by a model (its steps then block on requests)."""
    return getattr(env.unwrapped, "user_model", None) is not None or isinstance(episode_user(env), LLMUser)


def accepts_user_model(env_id: str) -> bool:
    """Whether the env's constructor takes ``user_model`` (every ``CapabilityEnv`` and target env does)."""
    import importlib
    import inspect

    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
    if isinstance(entry, type) and issubclass(entry, CapabilityEnv):
        return True
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


def check_policy(policy: object) -> None:
    """Refuse, before any episode starts, an object that does not implement the ``Policy`` protocol."""
    if not isinstance(policy, Policy):
        raise TypeError(
            f"{type(policy).__name__} is not a Policy: it needs spec, model, usage, reset() and act() "
            "(subclass trace_envs.rollout.ScriptedPolicy for a policy that no model plays)"
        )


async def arun_episode(
    env: gym.Env[Any, Any],
    policy: Policy,
    *,
    env_id: str,
    seed: int,
    sample: int = 0,
    max_steps: int | None = None,
    step_in_thread: bool | None = None,
    options: dict[str, Any] | None = None,
) -> EpisodeRecord:
    """Reset ``env`` with ``seed`` (and ``options``, if given), play ``policy`` until the episode ends,
    return its record.

    A model error (after the client's retries) or an env exception ends the episode with ``error``
    set (it is run again on resume); an authentication failure is raised, since no episode can
    succeed without credentials.
    """
    check_policy(policy)
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
        reset_kwargs: dict[str, Any] = {"seed": seed} if options is None else {"seed": seed, "options": options}
        if threaded:
            observation, reset_info = await asyncio.to_thread(env.reset, **reset_kwargs)
        else:
            observation, reset_info = env.reset(**reset_kwargs)
        messages = list(reset_info.get("messages") or [{"role": "user", "content": observation}])
        policy.reset(env, observation, reset_info)
        extra = getattr(policy, "instructions", "")
        if extra:  # the record shows the system prompt the model saw
            messages = [dict(m) for m in with_instructions(messages, extra)]
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
    verdict = info.get("verdict") or {}
    user = episode_user(env)
    usage = policy.usage
    model = policy.model
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
        usage=usage,
        user_usage=user_usage if isinstance(user_usage, Usage) else Usage(),
        timings=Timings(started_at=started_at, wall_s=time.perf_counter() - start, policy_s=policy_s, env_s=env_s),
        error=error,
    )


def run_episode(env: gym.Env[Any, Any], policy: Policy, **options: Any) -> EpisodeRecord:
    """Synchronous :func:`arun_episode` (runs its own event loop, and closes the policy model's
    connections of that loop when the episode ends)."""

    check_policy(policy)

    async def run() -> EpisodeRecord:
        async with closing_connections(policy.model):
            return await arun_episode(env, policy, **options)

    return asyncio.run(run())


PolicyFactory = Callable[[EpisodeJob], Policy]


def policy_factory(
    spec: str,
    *,
    model_options: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
    model: ChatModel | None = None,
    instructions: str = "",
) -> tuple[PolicyFactory, str]:
    """A per-episode policy factory for a spec, sharing one model client across episodes; returns
    (factory, recorded policy spec). ``instructions`` are added to every episode's system prompt (a model
    policy only: a scripted one never reads the prompt, so asking for them is a ``ValueError``)."""
    from .chat_policy import ChatPolicy
    from .policy import scripted_policy
    from .scripted import check_capabilities

    parsed = PolicySpec.parse(spec, **(model_options or {})) if model is None else None
    if parsed is None or parsed.model is not None:
        if model is None:
            from trace_envs.llm.factory import make_chat_model

            assert parsed is not None and parsed.model is not None
            model = make_chat_model(parsed.model)
        shared = model

        def chat_policy(job: EpisodeJob) -> Policy:
            return ChatPolicy(shared, sampling, instructions)

        chat_policy.model = shared  # type: ignore[attr-defined]
        return chat_policy, shared.spec
    if instructions.strip():
        raise ValueError(
            f"policy {spec!r} is scripted and never reads the system prompt, so instructions cannot change it; "
            "use a model policy (anthropic:<model>, openai:<base_url>#<model>, hf:<path>)"
        )
    check_capabilities(parsed.capabilities)  # once here, not in every episode
    return (lambda job: scripted_policy(parsed, seed=job.seed + 1_000_003 * job.sample)), spec


def checked_policy_spec(policy: str, model_options: dict[str, Any] | None = None) -> str:
    """The spec a policy's records carry, validated without building the model (an hf model would
    load its weights for nothing in a process that only hands the spec to workers), API key and
    ``flawed:<capability>`` names included."""
    from .scripted import check_capabilities

    parsed = PolicySpec.parse(policy, **(model_options or {}))
    if parsed.model is not None:
        parsed.model.check_api_key()
        return parsed.spec
    check_capabilities(parsed.capabilities)
    return policy


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
    instructions: str = "",
) -> RolloutSummary:
    """Run ``jobs`` with at most ``concurrency`` episodes in flight, appending each finished episode
    to ``store`` (if given) as soon as it ends; jobs the store already finished are skipped.

    ``policy`` is a spec string (scripted or model) or a factory ``job -> Policy`` (then give
    ``policy_spec``, the spec its records carry, for resume to match). ``instructions`` (spec strings only;
    a factory builds its own policies) are added to a model policy's system prompt; the store key does not
    include them, so give each instruction text its own store.
    """
    owned: list[Any] = [user_model] if user_model is not None else []
    if isinstance(policy, str):
        factory, spec = policy_factory(
            policy, model_options=model_options, sampling=sampling, instructions=instructions
        )
    else:
        if instructions:
            raise ValueError("arun_rollouts: pass instructions to policy_factory when giving a policy factory")
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
        if user_model is None:
            return gym.make(job.env_id, disable_env_checker=True, **job.env_kwargs)
        if not accepts_user_model(job.env_id):
            raise ValueError(f"{job.env_id} takes no user_model, so a model cannot play its user; drop user_model")
        metered = MeteredModel(user_model)  # one per env instance: its usage is this env's episode's
        return gym.make(job.env_id, disable_env_checker=True, user_model=metered, **job.env_kwargs)

    async def worker() -> None:
        while True:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            env = take_env(job)
            record = await arun_episode(
                env, factory(job), env_id=job.env_id, seed=job.seed, sample=job.sample, max_steps=max_steps,
                options=job.reset_options or None,
            )  # fmt: skip
            if record.policy != spec:
                record = record.model_copy(update={"policy": spec})
            if job.env_kwargs:
                record.metadata["env_kwargs"] = job.env_kwargs
            if job.reset_options:
                record.metadata["reset_options"] = job.reset_options
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
