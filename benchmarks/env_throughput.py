"""Reset, step and verify cost and memory per live episode, for every registered capability env
(and every domain variant of envs with a ``variant`` knob).

    python benchmarks/env_throughput.py [--env trace/x-v0 ...] [--episodes 300] [--rounds 5]

Single process, one core. Wall-clock best of ``--rounds`` (the least-disturbed round); steps exclude
the reference replay, which ``verify`` is timed with (cold cache). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
import typing
from typing import Any

import gymnasium as gym

from trace_envs.core import STOP_TOKEN, CapabilityEnv
from trace_envs.registry import list_capability_envs


def variants(env_id: str) -> list[dict[str, Any]]:
    """Knob sets to measure: one per value of a ``variant`` knob, else the defaults."""
    env = gym.make(env_id, disable_env_checker=True).unwrapped
    assert isinstance(env, CapabilityEnv), env_id
    field = env.Knobs.model_fields.get("variant")
    if field is None:
        return [{}]
    return [{"variant": value} for value in typing.get_args(field.annotation)]


def measure(env_id: str, knobs: dict[str, Any], episodes: int, rounds: int) -> dict[str, float]:
    """Best of ``rounds`` (the least-disturbed run) for reset, step and verify times."""
    env = gym.make(env_id, disable_env_checker=True, **knobs).unwrapped
    assert isinstance(env, CapabilityEnv)
    scripts = []
    for seed in range(episodes):
        env.reset(seed=seed)
        scripts.append([*env.oracle_actions(), STOP_TOKEN])
    best = {"reset_ms": float("inf"), "steps_per_s": 0.0, "verify_ms": float("inf")}
    for _ in range(rounds):
        steps = 0
        reset_time = step_time = verify_time = 0.0
        for seed, actions in enumerate(scripts):
            start = time.perf_counter()
            env.reset(seed=seed)
            reset_time += time.perf_counter() - start
            env.gold_hash()  # the reference replay is part of verify (timed cold below), not of the steps
            for action in actions:
                start = time.perf_counter()
                _, _, terminated, truncated, _ = env.step(action)
                step_time += time.perf_counter() - start
                steps += 1
                if terminated or truncated:
                    break
            env.clear_gold_cache()  # verify is timed cold: the reference replay included
            start = time.perf_counter()
            env.verify()
            verify_time += time.perf_counter() - start
        best["reset_ms"] = min(best["reset_ms"], reset_time / episodes * 1e3)
        best["steps_per_s"] = max(best["steps_per_s"], steps / step_time)
        best["verify_ms"] = min(best["verify_ms"], verify_time / episodes * 1e3)
    return {**best, "kb_per_episode": memory_per_episode(env_id, knobs)}


def memory_per_episode(env_id: str, knobs: dict[str, Any], count: int = 50) -> float:
    """Python heap held by one live env mid-episode (after reset and half its oracle actions)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    envs = []
    for seed in range(count):
        env = gym.make(env_id, disable_env_checker=True, **knobs).unwrapped
        assert isinstance(env, CapabilityEnv)
        env.reset(seed=seed)
        actions = env.oracle_actions()
        for action in actions[: len(actions) // 2]:
            env.step(action)
        envs.append(env)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return size / count / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", action="append", help="env id (repeatable; default: every capability env)")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5, help="report the best round (default 5)")
    args = parser.parse_args()
    print("| env | reset (mean ms) | steps/s | verify (ms) | memory per live episode (KB) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for env_id in args.env or list_capability_envs():
        for knobs in variants(env_id):
            r = measure(env_id, knobs, args.episodes, args.rounds)
            label = env_id + "".join(f" ({k}={v})" for k, v in knobs.items())
            print(
                f"| {label} | {r['reset_ms']:.3f} | {r['steps_per_s']:,.0f} | {r['verify_ms']:.3f} | {r['kb_per_episode']:.1f} |"
            )


if __name__ == "__main__":
    main()
