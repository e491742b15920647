"""Boxed vs in-process, side by side in one run: per shipped env, the median step round trip and steps/s both
ways, the box start time, and the GRPO step time on the tiny model both ways (prints one line per measure).

Each shipped env's boxed twin (``trace_envs.box.box_installed_env``) runs the same module's text in a box; both
play the reference solution of the same seeds. Step times are of ``env.step`` alone; steps/s counts resets too.

Usage: OMP_NUM_THREADS=1 python benchmarks/boxed_env.py [--episodes 50] [--boxes 5] [--train-steps 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym


def shipped_env_ids() -> list[str]:
    """The ids of the shipped capability envs (the ``generated_envs`` plugin's)."""
    from trace_envs.registration import env_class, list_capability_envs

    return [
        env_id
        for env_id in list_capability_envs()
        if getattr(env_class(env_id), "__module__", "").startswith("generated_envs")
    ]


def play(env: Any, episodes: int) -> tuple[list[float], float, int]:
    """Step times (seconds) of ``episodes`` reference episodes, the whole loop's wall time, and the step count."""
    times: list[float] = []
    start = time.perf_counter()
    for seed in range(episodes):
        env.reset(seed=seed)
        for action in env.oracle_actions():
            before = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            times.append(time.perf_counter() - before)
            if terminated or truncated:
                break
    return times, time.perf_counter() - start, len(times)


def compare_steps(env_id: str, episodes: int) -> None:
    from trace_envs.box import box_installed_env

    boxed_id = box_installed_env(env_id)
    results = {}
    for label, make_id in (("in-process", env_id), ("boxed", boxed_id)):
        env = gym.make(make_id).unwrapped
        play(env, 2)  # warm up (gold caches, the box's imports)
        times, wall, steps = play(env, episodes)
        results[label] = (statistics.median(times), steps / wall)
        env.close()
    (here, here_rate), (boxed, boxed_rate) = results["in-process"], results["boxed"]
    print(
        f"{env_id}: step median {here * 1e6:.0f} us in-process, {boxed * 1e6:.0f} us boxed "
        f"(+{(boxed - here) * 1e6:.0f} us); steps/s {here_rate:.0f} in-process, {boxed_rate:.0f} boxed "
        f"({boxed_rate / here_rate:.0%})"
    )


def box_start(boxes: int) -> None:
    from trace_envs.box import BoxProcess

    source = Path(__import__("generated_envs.order_cancel", fromlist=["x"]).__file__ or "").read_text(encoding="utf-8")
    seconds = []
    for _ in range(boxes):
        box = BoxProcess(source)
        seconds.append(box.start_seconds)
        box.close()
    print(
        f"box start (spawn, kernel layers, imports, module, Ready): median {statistics.median(seconds):.2f}s "
        f"(min {min(seconds):.2f}, max {max(seconds):.2f}) over {boxes} boxes"
    )


def grpo_steps(env_id: str, steps: int) -> None:
    import torch

    from trace_envs.box import box_installed_env
    from trace_envs.llm.tiny_model import build_tiny_model
    from trace_envs.training import TrainConfig, train

    torch.set_num_threads(1)
    boxed_id = box_installed_env(env_id)
    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_tiny_model(Path(tmp) / "tiny"))
        medians = {}
        for label, make_id in (("in-process", env_id), ("boxed", boxed_id)):
            config = TrainConfig(
                env_ids=[make_id],
                max_steps=steps,
                num_generations=4,
                per_device_train_batch_size=4,
                max_completion_length=64,
                num_seeds=16,
                save_steps=10_000,
            )
            meta = train(config, model, Path(tmp) / label, resume=False, progress=lambda *_: None)
            medians[label] = statistics.median(e["step_time"] for e in meta.curve if "step_time" in e)
    here, boxed = medians["in-process"], medians["boxed"]
    print(
        f"GRPO step on the tiny model ({env_id}, K=4, batch 4, 64 tokens): median {here:.2f}s in-process, "
        f"{boxed:.2f}s boxed ({boxed / here - 1:+.1%}) over {steps} steps"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=50, help="Reference episodes per env and way.")
    parser.add_argument("--boxes", type=int, default=5, help="Boxes started to time a start.")
    parser.add_argument("--train-steps", type=int, default=3, help="GRPO steps per way (0: skip training).")
    parser.add_argument("--train-env", default="trace/order-cancel-v0")
    args = parser.parse_args()

    import trace_envs  # noqa: F401  (registers the shipped envs)

    for env_id in shipped_env_ids():
        compare_steps(env_id, args.episodes)
    box_start(args.boxes)
    if args.train_steps > 0:
        grpo_steps(args.train_env, args.train_steps)


if __name__ == "__main__":
    main()
