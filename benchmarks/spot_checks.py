"""What the spot checks of a rollout cost: the same rollout with and without them, side by side, in rounds that
alternate which goes first (prints one line per measure).

Rollouts interleave a share of spot-check episodes (oracle, junk, flawed) with their real ones
(``trace_envs.rollout.spot_checks``). This plays ``--episodes`` oracle episodes of one env, once with
``spot_check_share=0`` and once with ``--share``, and reports the median wall time of each and the added share.
The oracle policy is instant, so this is the worst case: with a model policy the real episodes cost far more
and the same spot checks add a far smaller share.
A boxed env whose domain a target plays (``--env trace/retail-order-cancel-v0 --boxed``), with that target's data
here (``$TRACE_ENVS_TAU2_DATA``), also has its generated text scanned for evaluation data in each spot check.

Usage: OMP_NUM_THREADS=1 python benchmarks/spot_checks.py [--env trace/order-cancel-v0] [--episodes 500]
       [--share 0.02] [--rounds 3] [--boxed]
"""

from __future__ import annotations

import argparse
import statistics
import time

import trace_envs  # noqa: F401  (registers the shipped envs)
from trace_envs.rollout import make_jobs, run_rollouts


def timed(env_id: str, episodes: int, share: float) -> tuple[float, int]:
    """Wall seconds of one rollout of ``episodes`` oracle episodes, and the spot checks it played."""
    start = time.perf_counter()
    summary = run_rollouts(
        make_jobs([env_id], range(episodes)), "oracle", spot_check_share=share, spot_check_seed=34, concurrency=1
    )
    assert summary.failed == 0 and not summary.stopped, summary
    return time.perf_counter() - start, summary.spot_checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="trace/order-cancel-v0")
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--share", type=float, default=0.02)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--boxed", action="store_true", help="play the env's boxed twin (box_installed_env)")
    args = parser.parse_args()
    env_id = args.env
    if args.boxed:
        from trace_envs.registry import box_installed_env

        env_id = box_installed_env(env_id)
    timed(env_id, 20, args.share)  # warm: imports, caches, the first box
    without: list[float] = []
    with_checks: list[float] = []
    checks = 0
    for round_index in range(args.rounds):
        order = (0.0, args.share) if round_index % 2 == 0 else (args.share, 0.0)
        for share in order:
            seconds, played = timed(env_id, args.episodes, share)
            (with_checks if share else without).append(seconds)
            checks = played if share else checks
    base, checked = statistics.median(without), statistics.median(with_checks)
    print(f"env {env_id}, {args.episodes} oracle episodes, {args.rounds} rounds")
    print(f"without spot checks: {base:.3f} s (median)")
    print(f"with share {args.share:g}: {checked:.3f} s (median), {checks} spot checks")
    print(f"added: {checked - base:+.3f} s, {100 * (checked - base) / base:+.1f}% of the rollout")
    print(f"per spot check: {1000 * (checked - base) / max(1, checks):.2f} ms")


if __name__ == "__main__":
    main()
