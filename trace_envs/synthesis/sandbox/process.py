"""Run a candidate module's checks: the module in boxes (:mod:`trace_envs.box`), the checks here.

The box only hosts the env (one env per box process, started with the kernel layers: namespaces, a
sealed file system with a size-limited scratch, rlimits, an empty environment, a fresh hash seed and
the audit hook, see :mod:`trace_envs.box.launch`). trace_envs.testing's property checks, the flawed
solution's evidence and the fingerprints run in this process against a :class:`~trace_envs.box.BoxedEnv`
proxy, the same proxy training and evaluation use, so the evidence is produced outside the module's
interpreter: a module can neither replace a check nor write a result, and a box that exits, hangs or
breaks the protocol is a failure, never a pass. What the audit hook refused comes back on a pipe of
its own, and rejects the module.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from random import Random
from typing import Any

import gymnasium as gym

from trace_envs.box import BoxedEnv, BoxedEnvError, BoxFailure, BoxPool, BoxTimeout, boxed_env_class
from trace_envs.box.stand_in import ScriptedUserModel
from trace_envs.core.spot_checks import fresh_spot_check_seed, model_pace, paced_episodes
from trace_envs.rollout.scripted import play_actions
from trace_envs.testing import PropertyResult, SuiteReport, fingerprint, property_checks
from trace_envs.testing.properties import junk_policies

from ..gates.leakage import played_texts, replies_without_state, reset_texts
from ..gates.steps import compare_steps
from .protocol import (
    BlockedEvent,
    BoxError,
    BoxMode,
    BoxResult,
    FlawedEvidence,
    ModuleInfo,
    SandboxLimits,
    SandboxOutcome,
)

TAIL = 4000
BASE_ISOLATION = ("rlimits", "scratch directory", "empty environment", "fresh hash seed")


def run_in_sandbox(
    source: str,
    *,
    mode: BoxMode,
    seeds: list[int],
    env_id: str,
    fuzz_examples: int = 50,
    limits: SandboxLimits | None = None,
    model_user_seeds: list[int] | None = None,
) -> SandboxOutcome:
    """Run ``mode`` on the module ``source`` (in boxes of its own) and return what came back; in suite mode,
    ``model_user_seeds`` are also played with a model-played user (:func:`check_model_user`), as use plays a
    target whose users a model plays."""
    limits = limits or SandboxLimits()
    run = _Run(source, mode, seeds, env_id, fuzz_examples, BoxPool(limits, max_idle=2, stop_after_failure=True))
    run.model_user_seeds = list(model_user_seeds or [])
    started = time.monotonic()
    try:
        run.run()
    finally:
        run.pool.close()
    failure = run.pool.failures[0] if run.pool.failures else None
    stages = run.stages
    failed_stage = getattr(failure, "validator_stage", None)
    if failed_stage in stages:
        stages = stages[: stages.index(failed_stage) + 1]
    timed_out = isinstance(failure, BoxTimeout)
    signal_name = None if failure is None or timed_out else failure.signal_name
    return SandboxOutcome(
        run_id=" ".join(box.run_id for box in run.pool.boxes),
        result=run.result,
        blocked=[BlockedEvent.model_validate(r.model_dump()) for r in run.pool.refusals],
        stages=stages,
        signal=signal_name,
        timed_out=timed_out,
        crashed=None if failure is None or timed_out or signal_name else str(failure),
        wall_seconds=time.monotonic() - started,
        isolation=[*run.isolation, *BASE_ISOLATION, *(["audit hook"] if limits.audit_hook else [])],
        stdout_tail="".join(box.stdout_tail() for box in run.pool.boxes)[-TAIL:],
        stderr_tail="".join(box.stderr_tail() for box in run.pool.boxes)[-TAIL:],
        limits=limits,
        boxes_started=run.pool.started,
    )


class _Run:
    """One run's stages: import (start a box), the first reset, the suite and evidence, the fingerprints."""

    def __init__(self, source: str, mode: BoxMode, seeds: list[int], env_id: str, fuzz: int, pool: BoxPool):
        self.source, self.mode, self.seeds, self.env_id, self.fuzz = source, mode, seeds, env_id, fuzz
        self.pool = pool
        self.stages = ["startup"]
        pool.stage = lambda: self.stages[-1]
        self.result = BoxResult(mode=mode)
        self.isolation: list[str] = []
        self.model_user_seeds: list[int] = []

    def stage(self, name: str) -> None:
        self.stages.append(name)

    def note(self, failure: BoxFailure) -> None:
        """Record the box's failure with the stage the checks were in."""
        if not hasattr(failure, "validator_stage"):
            failure.validator_stage = self.stages[-1]  # type: ignore[attr-defined]
        self.pool.note_failure(failure)

    def run(self) -> None:
        cls = self.start()
        if cls is None:
            return
        if self.mode == "suite":
            gym.register(id=self.env_id, entry_point=cls, disable_env_checker=True)
            try:
                self.result.suite = self.suite()
                if self.pool.failures:
                    return
                if self.model_user_seeds:
                    self.stage("model-user episodes")
                    self.result.suite.results.append(self.property_result("model_user", cls))
                    if self.pool.failures:
                        return
                self.stage("flawed solutions")
                self.result.flawed = flawed_evidence(cls, self.seeds)
                self.stage("generated texts")
                env = cls()
                try:
                    self.result.generated_texts = reset_texts(env, self.seeds)
                    with contextlib.suppress(BoxedEnvError):  # an exception on the reference's path is the
                        self.result.generated_texts += played_texts(env, self.seeds)  # suite's finding
                        self.paced(env)
                finally:
                    env.close()
            except BoxFailure as exc:
                self.note(exc)
                return
            finally:
                gym.registry.pop(self.env_id, None)
        self.stage("fingerprint")
        start = time.perf_counter()
        try:
            self.result.fingerprints = {seed: fingerprint(cls(), seed) for seed in self.seeds}
        except BoxedEnvError as exc:
            self.result.error = box_error("fingerprint", exc)
        except BoxFailure as exc:
            self.note(exc)
        self.result.seconds["fingerprint"] = time.perf_counter() - start

    def paced(self, env: BoxedEnv) -> None:
        """A short junk episode and the reference solution on the last seed (a drawn one) at a model's pace
        (:func:`~trace_envs.core.spot_checks.paced_episodes`, ``$TRACE_ENVS_PACE``), as the spot checks play
        them in use: a wrong reward is a problem, and their replies join the texts the leakage check scans."""
        pace = model_pace()
        if pace is None:
            return
        self.stage("paced episodes")
        start = time.perf_counter()
        seed = self.seeds[-1]
        played = paced_episodes(env, seed, Random(fresh_spot_check_seed()), pace)
        if played.problem is not None:
            self.result.paced = f"on seed {seed}, the {played.problem[0]} episode {played.problem[1]}"
        self.result.generated_texts += replies_without_state(env, played.texts)
        self.result.seconds["paced episodes"] = time.perf_counter() - start

    def start(self) -> type[BoxedEnv] | None:
        """Start a box (the module's import) and reset it once; the proxy class, or None (recorded why)."""
        self.stage("import")
        start = time.perf_counter()
        try:
            box = self.pool.acquire(self.source, {})
        except BoxedEnvError as exc:
            self.result.error = box_error("import", exc)
            return None
        except BoxFailure as exc:
            self.note(exc)
            return None
        self.result.seconds["import"] = time.perf_counter() - start
        self.isolation += [*box.isolation, *box.sealed]
        cls = boxed_env_class(self.source, box.ready, origin="the candidate module", pool=self.pool)
        self.pool.release(box, self.source, {})
        self.stage("reset")
        try:
            env = cls()
            _, info = env.reset(seed=self.seeds[0])
        except BoxedEnvError as exc:
            self.result.error = box_error("reset", exc, self.seeds[0])
            return None
        except BoxFailure as exc:
            self.note(exc)
            return None
        env.close()
        self.result.module = ModuleInfo(
            class_name=box.ready.class_name,
            capability=cls.capability.name,
            domain=box.ready.domain,
            tool_schemas=info["tools"],
            env_id=box.ready.env_id,
        )
        return cls

    def suite(self) -> SuiteReport:
        """trace_envs.testing's property checks, run here against the proxy (the cross-process one is two runs)."""
        results = []
        for name, check in property_checks(self.env_id, self.seeds, self.fuzz, subprocess=False).items():
            self.stage(f"property {name}")
            start = time.perf_counter()
            failure = _outcome(check)
            for box_failure in box_failures(failure):
                self.note(box_failure)
            message = "" if failure is None else describe_failure(failure)
            seconds = time.perf_counter() - start
            results.append(PropertyResult(name=name, passed=failure is None, seconds=seconds, message=message))
            self.result.seconds[f"property {name}"] = seconds
            if self.pool.failures:
                break  # a box hung or died: the rest would only wait for the same
        return SuiteReport(env_id=self.env_id, seeds=self.seeds, results=results)

    def property_result(self, name: str, cls: type[BoxedEnv]) -> PropertyResult:
        """The model-user property (:func:`check_model_user`) on :attr:`model_user_seeds`, as the suite reports one."""
        start = time.perf_counter()
        failure = _outcome(lambda: check_model_user(cls, self.model_user_seeds))
        for box_failure in box_failures(failure):
            self.note(box_failure)
        seconds = time.perf_counter() - start
        self.result.seconds[f"property {name}"] = seconds
        message = "" if failure is None else describe_failure(failure)
        return PropertyResult(name=name, passed=failure is None, seconds=seconds, message=message)


def check_model_user(cls: type[BoxedEnv], seeds: list[int]) -> None:
    """With a model-played user (reset with ``model_user``, as use plays the target), the oracle still scores
    1.0 and every junk policy 0 on ``seeds``: a module cannot pay junk only when a model plays its user."""
    env = cls(user_model=ScriptedUserModel())
    try:
        for seed in seeds:
            env.reset(seed=seed)
            oracle, junk = env.oracle_actions(), junk_policies(env, seed)
            reward = play_actions(env, oracle, seed=seed)[0]
            assert reward == 1.0, f"with a model-played user the oracle scores {reward} on seed {seed}"
            for name, actions in junk.items():
                reward = play_actions(env, actions, seed=seed)[0]
                assert reward == 0.0, (
                    f"with a model-played user the '{name}' policy scores {reward} on seed {seed}; a verifier must "
                    "not depend on who plays the user"
                )
    finally:
        env.close()


def _outcome(check: Callable[[], Any]) -> Exception | None:
    try:
        check()
    except Exception as exc:  # each property's failure, whatever the box answered
        return exc
    return None


def box_error(stage: str, exc: BoxedEnvError, seed: int | None = None) -> BoxError:
    """An exception of the module's code (raised in the box) as the result's error."""
    message = str(exc).partition(": ")[2]
    return BoxError(
        stage=stage, kind=exc.error, message=message[:1000], line=exc.line, seed=seed, traceback=exc.traceback
    )


def box_failures(exc: BaseException | None) -> list[BoxFailure]:
    """Box failures behind a check's failure (raised, chained, or inside an exception group)."""
    found: list[BoxFailure] = []
    seen: set[int] = set()
    stack = [exc] if exc is not None else []
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, BoxFailure):
            found.append(current)
        stack += [e for e in (current.__cause__, current.__context__) if e is not None]
        stack += list(getattr(current, "exceptions", []))
    return found


def describe_failure(exc: BaseException) -> str:
    """A property's failure as its message (an assertion's text; else the exception and the module's line)."""
    message = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
    line = getattr(exc, "line", None)
    where = f" (raised at line {line} of the module)" if line is not None else ""
    return message[:2000] + where


def flawed_evidence(cls: type[BoxedEnv], seeds: list[int]) -> list[FlawedEvidence]:
    """Per seed: is there a flawed solution, is it the reference itself, what it scores, how it differs."""
    env = cls()
    evidence = []
    for seed in seeds:
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        if flawed is None:
            evidence.append(FlawedEvidence(seed=seed, declared=False))
            continue
        reference = env.oracle_actions()
        try:
            reward: float | None = play_actions(env, flawed, seed=seed)[0]
        except BoxedEnvError:  # the suite reports the exception; here it is only missing evidence
            reward = None
        evidence.append(
            FlawedEvidence(
                seed=seed,
                declared=True,
                reward=reward,
                same_as_oracle=flawed == reference,
                steps=compare_steps(reference, flawed),
            )
        )
    env.close()
    return evidence
