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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import gymnasium as gym

from trace_envs.core import EnvProtocol, contract_gaps
from trace_envs.core.rewards import reward_problem
from trace_envs.core.spot_checks import DEFAULT_SPOT_CHECK_SHARE
from trace_envs.llm.base import ChatModel, Usage
from trace_envs.llm.client import SAMPLE_INDEX, MeteredModel, aclose_models, closing_connections
from trace_envs.llm.errors import AuthenticationFailed
from trace_envs.llm_user import LLMUser

from .instructions import with_instructions
from .jobs import EpisodeJob, RolloutSummary, pending_jobs
from .policy import Policy
from .policy_spec import PolicySpec
from .spot_checks import RunSpotChecks, stopped_record
from .store import EpisodeRecord, Timings, ToolCallRecord, TrajectoryStore


def episode_user(env: gym.Env[Any, Any]) -> Any:
    """The current user object of an env (``None`` if it has none)."""
    return getattr(env.unwrapped, "user", None)


def has_model_user(env: gym.Env[Any, Any]) -> bool:
    """Whether the env's user is played by a model (its steps then block on requests)."""
    return getattr(env.unwrapped, "user_model", None) is not None or isinstance(episode_user(env), LLMUser)


def accepts_user_model(env_id: str) -> bool:
    """Whether the env's constructor takes ``user_model``: every env registered with a kind does (capability,
    boxed and target envs); any other env if its constructor names it."""
    import importlib
    import inspect

    from trace_envs.registry import env_kind

    if env_kind(env_id) is not None:
        return True
    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
    try:
        return "user_model" in inspect.signature(entry).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _tool_call_records(messages: list[dict[str, Any]]) -> list[ToolCallRecord]:
    """The tool calls of a transcript and their results. The transcript is the env's (a boxed env's is parsed by
    type first, but any env's may lack a field): a call without a name or arguments is recorded with none."""
    records: list[ToolCallRecord] = []
    by_id: dict[str, ToolCallRecord] = {}
    step = -1
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            step += 1
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                arguments = call.get("arguments")
                record = ToolCallRecord(
                    step=step,
                    id=str(call.get("id") or ""),
                    name=str(call.get("name") or ""),
                    arguments=arguments if isinstance(arguments, dict) else {},
                )
                records.append(record)
                by_id[record.id] = record
        elif message.get("role") == "tool":
            target = by_id.get(str(message.get("id") or ""))
            if target is not None:
                content = message.get("content")
                target.result = content if isinstance(content, str) or content is None else str(content)
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
    play = _Play()
    meter = getattr(env.unwrapped, "user_model", None)
    if isinstance(meter, MeteredModel):
        meter.reset()
    sample_token = SAMPLE_INDEX.set(sample)
    try:
        threaded = step_in_thread if step_in_thread is not None else has_model_user(env)
        reset_kwargs: dict[str, Any] = {"seed": seed} if options is None else {"seed": seed, "options": options}
        if threaded:
            observation, play.reset_info = await asyncio.to_thread(env.reset, **reset_kwargs)
        else:
            observation, play.reset_info = env.reset(**reset_kwargs)
        play.messages = list(play.reset_info.get("messages") or [{"role": "user", "content": observation}])
        policy.reset(env, observation, play.reset_info)
        extra = getattr(policy, "instructions", "")
        if extra:  # the record shows the system prompt the model saw
            play.messages = [dict(m) for m in with_instructions(play.messages, extra)]
        play.info = play.reset_info
        await _play_turns(env, policy, observation, play, threaded, max_steps)
    except AuthenticationFailed:
        raise
    except Exception as exc:  # one broken episode must not stop a batch; it is recorded and rerun later
        play.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
        play.ended = "error"
    finally:
        SAMPLE_INDEX.reset(sample_token)
    timings = Timings(
        started_at=started_at, wall_s=time.perf_counter() - start, policy_s=play.policy_s, env_s=play.env_s
    )
    try:
        return _episode_record(env, policy, play, env_id=env_id, seed=seed, sample=sample, timings=timings)
    except Exception as exc:  # what the env left (its info, its transcript) does not make a record: still one
        play.error = f"the episode's record could not be built from what the env returned: {type(exc).__name__}"
        return _bare_record(policy, play, env_id=env_id, seed=seed, sample=sample, timings=timings)


@dataclass
class _Play:
    """What an episode's turns leave behind, filled in as it is played (also when it ends in an error)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    reset_info: dict[str, Any] = field(default_factory=dict)
    reward_total: float = 0.0
    terminated: bool = False
    truncated: bool = False
    ended: str | None = None
    error: str | None = None
    policy_s: float = 0.0
    env_s: float = 0.0


async def _play_turns(
    env: gym.Env[Any, Any], policy: Policy, observation: Any, play: _Play, threaded: bool, max_steps: int | None
) -> None:
    """Alternate the policy's actions and env steps until the episode ends (or ``max_steps`` turns)."""
    aact = getattr(policy, "aact", None)
    while True:
        tick = time.perf_counter()
        action = await aact(observation, play.info) if aact is not None else policy.act(observation, play.info)
        tock = time.perf_counter()
        play.policy_s += tock - tick
        play.actions.append(action)
        if threaded:
            observation, reward, terminated, truncated, play.info = await asyncio.to_thread(env.step, action)
        else:
            observation, reward, terminated, truncated, play.info = env.step(action)
        play.terminated, play.truncated = terminated, truncated
        play.env_s += time.perf_counter() - tock
        problem = reward_problem(reward, env)
        if problem is not None:
            raise ValueError(f"{problem} (step {len(play.actions)}); the episode is not scored")
        play.reward_total += float(reward)
        step_messages = play.info.get("messages")
        if step_messages is None:
            step_messages = [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
        play.messages.extend(step_messages)
        if terminated or truncated:
            play.ended = play.info.get("ended") or ("terminated" if terminated else "truncated")
            if play.info.get("box_error"):  # the env's box failed: an errored episode, rerun on resume
                play.error = f"box error: {play.info['box_error']}"
            return
        if max_steps is not None and len(play.actions) >= max_steps:
            play.truncated, play.ended = True, "max_steps"
            await _score_cut(env, play, threaded)
            return


async def _score_cut(env: gym.Env[Any, Any], play: _Play, threaded: bool) -> None:
    """A conversation env cut by ``max_steps`` is scored as at its own turn limit (its verdict at the cut goes
    into the last ``info``), so that the cut episode keeps e.g. its device similarity instead of no verdict."""
    inner = env.unwrapped
    if contract_gaps(inner):
        return
    cut = cast(EnvProtocol, inner).cut
    extra = await asyncio.to_thread(cut) if threaded else cut()
    play.info = {**play.info, **extra}
    if extra.get("box_error"):  # the box failed (or broke the protocol) at the cut: an errored episode
        play.error = f"box error: {extra['box_error']}"


def _episode_record(
    env: gym.Env[Any, Any], policy: Policy, play: _Play, *, env_id: str, seed: int, sample: int, timings: Timings
) -> EpisodeRecord:
    """The stored record of a played episode: its messages and tool calls, verdict, usage and timings."""
    verdict = play.info.get("verdict") or {}
    user = episode_user(env)
    model = policy.model
    user_model = getattr(user, "model", None)
    meter = getattr(env.unwrapped, "user_model", None)
    user_usage = meter.usage if isinstance(meter, MeteredModel) else getattr(user, "usage", None)
    success = play.error is None and play.terminated and play.reward_total >= 1.0
    return EpisodeRecord(
        env_id=env_id,
        seed=seed,
        sample=sample,
        task_id=play.reset_info.get("task_id"),
        capability=play.reset_info.get("capability"),
        policy=policy.spec,
        model=model.spec if model is not None else None,
        user_model=user_model.spec if user_model is not None else None,
        messages=play.messages,
        tool_calls=_tool_call_records(play.messages),
        actions=play.actions,
        reward=play.reward_total,
        success=bool(verdict.get("success", success)),
        terminated=play.terminated,
        truncated=play.truncated,
        ended=play.ended,
        num_steps=len(play.actions),
        components={k: float(v) for k, v in (verdict.get("components") or {}).items()},
        verdict=verdict,
        usage=policy.usage,
        user_usage=user_usage if isinstance(user_usage, Usage) else Usage(),
        timings=timings,
        error=play.error,
    )


def run_episode(env: gym.Env[Any, Any], policy: Policy, **options: Any) -> EpisodeRecord:
    """Synchronous :func:`arun_episode` (runs its own event loop, and closes the policy model's
    connections of that loop when the episode ends)."""

    check_policy(policy)

    async def run() -> EpisodeRecord:
        async with closing_connections(policy.model):
            return await arun_episode(env, policy, **options)

    return asyncio.run(run())


def _bare_record(
    policy: Policy, play: _Play, *, env_id: str, seed: int, sample: int, timings: Timings
) -> EpisodeRecord:
    """The record of an episode whose env returned what no record holds: its actions and error only."""
    actions = [action if isinstance(action, str) else repr(action) for action in play.actions]
    return EpisodeRecord(
        env_id=env_id,
        seed=seed,
        sample=sample,
        policy=policy.spec,
        actions=actions,
        ended="error",
        num_steps=len(actions),
        usage=policy.usage,
        timings=timings,
        error=play.error,
    )


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
        parsed.model.check_local_model()
        return parsed.spec
    check_capabilities(parsed.capabilities)
    return policy


def _factory_and_spec(
    policy: str | PolicyFactory,
    policy_spec: str | None,
    model_options: dict[str, Any] | None,
    sampling: dict[str, Any] | None,
    instructions: str,
) -> tuple[PolicyFactory, str]:
    """The per-episode policy factory of a run and the spec its records carry (a factory needs ``policy_spec``)."""
    if isinstance(policy, str):
        return policy_factory(policy, model_options=model_options, sampling=sampling, instructions=instructions)
    if instructions:
        raise ValueError("arun_rollouts: pass instructions to policy_factory when giving a policy factory")
    if policy_spec is None:
        raise ValueError("arun_rollouts: pass policy_spec (the spec recorded per episode) with a policy factory")
    return policy, policy_spec


class _EnvPool:
    """Envs of a run kept for reuse between episodes, one idle list per (env id, constructor options); with a
    ``user_model`` each new env gets its own metered client (its usage is that env's episode's)."""

    def __init__(self, user_model: ChatModel | None):
        self.user_model = user_model
        self.idle: dict[tuple[str, str], list[gym.Env[Any, Any]]] = {}

    @staticmethod
    def key(job: EpisodeJob) -> tuple[str, str]:
        return job.env_id, repr(sorted(job.env_kwargs.items()))

    def take(self, job: EpisodeJob) -> gym.Env[Any, Any]:
        pool = self.idle.setdefault(self.key(job), [])
        if pool:
            return pool.pop()
        if self.user_model is None:
            return gym.make(job.env_id, disable_env_checker=True, **job.env_kwargs)
        if not accepts_user_model(job.env_id):
            raise ValueError(f"{job.env_id} takes no user_model, so a model cannot play its user; drop user_model")
        metered = MeteredModel(self.user_model)
        return gym.make(job.env_id, disable_env_checker=True, user_model=metered, **job.env_kwargs)

    def put(self, job: EpisodeJob, env: gym.Env[Any, Any]) -> None:
        self.idle[self.key(job)].append(env)

    def close(self) -> None:
        for pool in self.idle.values():
            for env in pool:
                env.close()


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
    on_interrupt: Callable[[int], None] | None = None,
    spot_check_share: float = DEFAULT_SPOT_CHECK_SHARE,
    spot_check_seed: int | None = None,
) -> RolloutSummary:
    """Run ``jobs`` with at most ``concurrency`` episodes in flight, appending each finished episode
    to ``store`` (if given) as soon as it ends; jobs the store already finished are skipped.

    Ctrl-C (under ``asyncio.run``, which cancels this coroutine) starts no new episode and lets the ones in
    flight finish into the store, then raises ``KeyboardInterrupt``; ``on_interrupt`` gets how many are in
    flight when it starts waiting. A second Ctrl-C stops the wait and drops them.

    Spot checks (:mod:`trace_envs.rollout.spot_checks`) are interleaved with the episodes: each env's first
    seed and ``spot_check_share`` of its others (drawn with ``spot_check_seed``, fresh when None) get an oracle,
    a junk and a flawed episode; an env that pays junk or whose oracle fails is stopped, and its remaining
    episodes are stored as errored records naming it and the seed (``summary.stopped``).

    ``policy`` is a spec string (scripted or model) or a factory ``job -> Policy`` (then give
    ``policy_spec``, the spec its records carry, for resume to match). ``instructions`` (spec strings only;
    a factory builds its own policies) are added to a model policy's system prompt; the store key does not
    include them, so give each instruction text its own store.
    """
    factory, spec = _factory_and_spec(policy, policy_spec, model_options, sampling, instructions)
    owned: list[Any] = [user_model] if user_model is not None else []
    owned.append(getattr(factory, "model", None))
    summary = RolloutSummary()
    pending = pending_jobs(jobs, spec, store)
    summary.skipped = len(jobs) - len(pending)
    envs = _EnvPool(user_model)
    checks = RunSpotChecks(pending, spot_check_share, spot_check_seed)
    summary.spot_check_seed = checks.seed
    queue: asyncio.Queue[EpisodeJob] = asyncio.Queue()
    for job in pending:
        queue.put_nowait(job)
    start = time.perf_counter()
    flight = _Flight()

    def finished(record: EpisodeRecord) -> None:
        if store is not None:
            store.append(record)
        summary.add(record)
        if on_episode is not None:
            on_episode(record)

    async def worker() -> None:
        while not flight.stopping:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            failure = await checks.before(job)
            if failure is not None:
                finished(stopped_record(job, spec, failure))
                continue
            flight.episodes += 1
            env = envs.take(job)
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
            envs.put(job, env)
            finished(record)
            flight.episodes -= 1
            await asyncio.sleep(0)  # scripted episodes never wait: let Ctrl-C's cancellation in between them

    try:
        await checks.first()
        count = max(1, min(concurrency, len(pending)))
        ensure_threads(asyncio.get_running_loop(), count)
        workers = [asyncio.create_task(worker()) for _ in range(count)]
        await _await_workers(workers, flight, on_interrupt)
    finally:
        envs.close()
        await aclose_models(*owned)  # this loop's HTTP connections die with it
    summary.spot_checks = checks.played
    summary.stopped = {env_id: failure.message for env_id, failure in checks.stopped.items()}
    summary.wall_s = time.perf_counter() - start
    return summary


def ensure_threads(loop: asyncio.AbstractEventLoop, episodes: int) -> None:
    """Give ``loop`` a default thread pool with a thread for each episode in flight and a few more: a model's
    request (``asyncio.to_thread``) holds a thread while it waits for its batch, and the default pool has only
    ``cpu_count + 4`` (6 on a 2-core machine), which capped a rollout of 16 at 6 requests in flight. A pool
    that is large enough already is kept."""
    needed = episodes + 4
    current = getattr(loop, "_default_executor", None)  # asyncio keeps it private; absent until first used
    if current is None or getattr(current, "_max_workers", 0) < needed:
        loop.set_default_executor(ThreadPoolExecutor(max_workers=needed, thread_name_prefix="trace-rollout"))


@dataclass
class _Flight:
    """The episodes a rollout run has in flight, and whether Ctrl-C asked it to start no more."""

    episodes: int = 0
    stopping: bool = False


async def _await_workers(
    workers: list[asyncio.Task[None]], flight: _Flight, on_interrupt: Callable[[int], None] | None
) -> None:
    """Wait for every worker; the first one's error (e.g. AuthenticationFailed) cancels the others and is
    raised. When Ctrl-C cancels the waiting coroutine, the workers are not cancelled: they start no new
    episode, the ones in flight finish (a model's generation in a worker thread cannot be stopped half way,
    and its episode is then kept), and the cancellation is raised again, which ``asyncio.run`` reports as
    ``KeyboardInterrupt``. A second Ctrl-C raises ``KeyboardInterrupt`` out of the wait itself."""
    try:
        await _first_failure(workers)
    except asyncio.CancelledError:
        flight.stopping = True
        if on_interrupt is not None:
            on_interrupt(flight.episodes)
        await _first_failure(workers)
        raise


async def _first_failure(workers: list[asyncio.Task[None]]) -> None:
    """Until every worker is done, or one fails: then cancel the rest and raise its error."""
    done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
    failed = next((task for task in done if not task.cancelled() and task.exception() is not None), None)
    if failed is None:
        return
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    raise cast(BaseException, failed.exception())
