"""What the paced episodes add to a spot check of a boxed env: the same checks with pacing off and at a pace,
side by side (prints one line per measure).

A spot check of a boxed env plays oracle, junk and flawed episodes at machine speed, then a short junk episode and
the reference at a model's pace (``trace_envs.core.spot_checks.paced_episodes``, ``$TRACE_ENVS_PACE``). This
times ``--checks`` spot checks of the boxed twin of ``--env`` (seeds 0, 1, ...) with pacing off and at
``--pace``, and reports the mean wall time of each and the difference (the pauses, and the paced episodes' box round trips).

Usage: OMP_NUM_THREADS=1 python benchmarks/paced_spot_checks.py [--env trace/order-cancel-v0] [--checks 5]
       [--pace 0.5,2.5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from random import Random

import gymnasium as gym

import trace_envs  # noqa: F401  (registers the shipped envs)
from trace_envs.box import box_installed_env
from trace_envs.core.spot_checks import PACE_VARIABLE, spot_check


def timed_checks(env_id: str, checks: int, pace: str) -> list[float]:
    """Wall seconds of each of ``checks`` spot checks of ``env_id`` at ``pace`` (``off``: none paced)."""
    os.environ[PACE_VARIABLE] = pace
    env = gym.make(env_id).unwrapped
    seconds = []
    try:
        for seed in range(checks):
            start = time.perf_counter()
            failure = spot_check(env, env_id, seed, Random(seed))
            seconds.append(time.perf_counter() - start)
            assert failure is None, failure
    finally:
        env.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="trace/order-cancel-v0")
    parser.add_argument("--checks", type=int, default=5)
    parser.add_argument("--pace", default="0.5,2.5", help="LOW,HIGH seconds before each paced action")
    args = parser.parse_args()
    env_id = box_installed_env(args.env)
    timed_checks(env_id, 1, "off")  # warm: imports, caches, the first box
    fast = timed_checks(env_id, args.checks, "off")
    paced = timed_checks(env_id, args.checks, args.pace)
    print(f"env {env_id}, {args.checks} spot checks, pace {args.pace} s per paced action")
    print(f"pacing off: {statistics.mean(fast):.3f} s per spot check (mean)")
    print(
        f"paced:      {statistics.mean(paced):.3f} s per spot check (mean; min {min(paced):.2f}, max {max(paced):.2f})"
    )
    print(f"added:      {statistics.mean(paced) - statistics.mean(fast):+.3f} s per spot check")


if __name__ == "__main__":
    main()
