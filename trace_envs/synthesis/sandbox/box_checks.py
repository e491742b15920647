"""Inside the sandbox: load the candidate module, register its env and run trace_envs.testing's checks.

Imported by the runner before the audit hook is installed, so everything the checks need lazily
(Hypothesis, Gymnasium's env checker, the scripted policies) is imported here, up front.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import gymnasium as gym
import gymnasium.utils.env_checker
import hypothesis
import hypothesis.strategies

import trace_envs
import trace_envs.testing.strategies
from trace_envs.core import CapabilityEnv
from trace_envs.plugins import defined_envs, plugin_packages
from trace_envs.rollout.scripted import play_actions
from trace_envs.testing import PropertyResult, SuiteReport, fingerprint, make_env, property_checks

from ..gates.steps import compare_steps
from .protocol import BoxError, BoxRequest, BoxResult, FlawedEvidence, ModuleInfo

_PRELOADED = (gymnasium.utils.env_checker, hypothesis, hypothesis.strategies, trace_envs.testing.strategies)


def _start_hypothesis() -> None:
    """Run one trivial Hypothesis test, so that its one-time set-up (registering its PRNG, which walks
    the interpreter's objects with ``gc.get_referrers``) happens here, before the audit hook, and is
    not taken for the module's introspection."""
    hypothesis.settings(max_examples=1, database=None)(hypothesis.given(hypothesis.strategies.none())(lambda _: None))()


_start_hypothesis()


def trusted_roots() -> list[str]:
    """Where trusted code is read from: the interpreter's prefixes and our packages (not the repo root)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for package in (trace_envs, *plugin_packages(), hypothesis, gym):
        roots.add(str(Path(package.__file__ or "").resolve().parent))
    return sorted(roots)


def load_module(path: str) -> ModuleType:
    """Execute the file at ``path`` as a fresh module (a name of its own, registered in sys.modules)."""
    name = "trace_candidate_" + Path(path).stem.replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def env_class(module: ModuleType) -> type[CapabilityEnv]:
    """The one concrete CapabilityEnv subclass the module defines."""
    found = defined_envs(module)
    if len(found) != 1:
        names = ", ".join(sorted(c.__name__ for c in found)) or "none"
        raise TypeError(f"the module must define exactly one concrete CapabilityEnv subclass; found {names}")
    return found[0]


def _error(stage: str, exc: BaseException, module_path: str, seed: int | None = None) -> BoxError:
    target = os.path.realpath(module_path)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.realpath(f.filename) == target]
    shown = traceback.format_list(frames[-5:]) + traceback.format_exception_only(type(exc), exc)
    return BoxError(
        stage=stage,
        kind=type(exc).__name__,
        message=str(exc)[:1000],
        line=frames[-1].lineno if frames else None,
        seed=seed,
        traceback="".join(shown)[-3000:],
    )


def run(request: BoxRequest, set_stage: Callable[[str], None]) -> BoxResult:
    """Run the request; any exception is reported with the stage it stopped, never raised."""
    result = BoxResult(mode=request.mode)
    stage = "import"
    seed: int | None = None  # the seed of the reset under way, for an error raised while generating its task
    try:
        set_stage(stage)
        start = time.perf_counter()
        module = load_module(request.module_path)
        result.seconds["import"] = time.perf_counter() - start
        stage = "reset"
        set_stage(stage)
        cls = env_class(module)
        gym.register(id=request.env_id, entry_point=cls, disable_env_checker=True)
        env = make_env(request.env_id)
        seed = request.seeds[0]
        _, info = env.reset(seed=seed)
        seed = None
        result.module = ModuleInfo(
            class_name=cls.__name__,
            capability=cls.capability.name,
            domain=env.domain.name,
            tool_schemas=info["tools"],
        )
        if request.mode == "suite":
            result.suite = _suite(request, set_stage, result.seconds)
            stage = "flawed solutions"
            set_stage(stage)
            result.flawed = _flawed_evidence(request)
        stage = "fingerprint"
        set_stage(stage)
        start = time.perf_counter()
        result.fingerprints = {seed: fingerprint(make_env(request.env_id), seed) for seed in request.seeds}
        result.seconds["fingerprint"] = time.perf_counter() - start
    except BaseException as exc:  # the module's own code may raise anything, SystemExit included
        result.error = _error(stage, exc, request.module_path, seed)
    return result


def _suite(request: BoxRequest, set_stage: Callable[[str], None], seconds: dict[str, float]) -> SuiteReport:
    """trace_envs.testing's property checks (the cross-process one is two sandbox runs, compared by the parent)."""
    results = []
    checks = property_checks(request.env_id, request.seeds, request.fuzz_examples, subprocess=False)
    for name, check in checks.items():
        set_stage(f"property {name}")
        start = time.perf_counter()
        try:
            check()
            results.append(PropertyResult(name=name, passed=True, seconds=time.perf_counter() - start))
        except BaseException as exc:  # each property's failure, whatever the module raised
            message = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
            line = _error(name, exc, request.module_path).line
            where = f" (raised at line {line} of the module)" if line is not None else ""
            results.append(
                PropertyResult(
                    name=name, passed=False, seconds=time.perf_counter() - start, message=message[:2000] + where
                )
            )
        seconds[f"property {name}"] = results[-1].seconds
    return SuiteReport(env_id=request.env_id, seeds=request.seeds, results=results)


def _flawed_evidence(request: BoxRequest) -> list[FlawedEvidence]:
    """Per seed: is there a flawed solution, is it the reference itself, what it scores, how it differs."""
    env = make_env(request.env_id)
    evidence = []
    for seed in request.seeds:
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        if flawed is None:
            evidence.append(FlawedEvidence(seed=seed, declared=False))
            continue
        reference = env.oracle_actions()
        try:
            reward: float | None = play_actions(env, flawed, seed=seed)[0]
        except Exception:  # the suite reports the exception; here it is only missing evidence
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
    return evidence
