"""What the boxed proxy's checks of a step reply cost (``trace_envs.box.checks.checked_step``): the step replies
of reference episodes of one shipped env, checked again and again, in microseconds per step.

Usage: OMP_NUM_THREADS=1 python benchmarks/proxy_checks.py [--env trace/order-cancel-v0] [--seeds 20] [--repeat 50]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import gymnasium as gym

import trace_envs  # noqa: F401  (registers the shipped envs)
from trace_envs.box.checks import checked_step
from trace_envs.box.protocol import StepReply
from trace_envs.core.spaces import MAX_TEXT_LENGTH


def step_replies(env_id: str, seeds: int) -> list[StepReply]:
    """The step replies a box would send for the reference episodes of ``seeds`` seeds (through JSON, as sent)."""
    env: Any = gym.make(env_id).unwrapped
    replies = []
    for seed in range(seeds):
        env.reset(seed=seed)
        for action in [*env.oracle_actions(), "###STOP###"]:
            observation, reward, terminated, truncated, info = env.step(action)
            reply = StepReply(
                observation=observation, reward=float(reward), terminated=terminated, truncated=truncated, info=info
            )
            replies.append(StepReply.model_validate_json(reply.model_dump_json()))
            if terminated or truncated:
                break
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="trace/order-cancel-v0")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    replies = step_replies(args.env, args.seeds)
    start = time.perf_counter()
    for _ in range(args.repeat):
        for reply in replies:
            checked_step(reply, MAX_TEXT_LENGTH, (0.0, 1.0))
    per_step = (time.perf_counter() - start) / (args.repeat * len(replies))
    print(f"{args.env}: {1e6 * per_step:.1f} us per step reply checked ({len(replies)} replies x {args.repeat})")


if __name__ == "__main__":
    main()
