"""Boxed vs in-process, side by side in one run: per shipped env, the median step round trip and steps/s both
ways, the box start time, a long run's steps/s (boxes replaced as they are used up, with and without successors
started in the background), and the GRPO step time on the tiny model both ways (prints one line per measure).

Each shipped env's boxed twin (``trace_envs.registry.box_installed_env``) runs the same module's text in a box; both
play the reference solution of the same seeds. Step times are of ``env.step`` alone; steps/s counts resets too.

Usage: OMP_NUM_THREADS=1 python benchmarks/boxed_env.py [--episodes 50] [--boxes 5] [--train-steps 3]
       [--train-rounds 1] [--long-episodes 3000]
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
    from trace_envs.registry import env_class, list_capability_envs

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
    from trace_envs.registry import box_installed_env

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


def long_run(env_id: str, episodes: int) -> None:
    """Steps/s over ``episodes`` episodes in-process and boxed, where boxes are replaced as they are used up
    (``BoxLimits.resets_per_box``): with each successor started in the background, and without."""
    from trace_envs.box import BoxedEnv, BoxPool
    from trace_envs.registry import box_installed_env

    here = gym.make(env_id).unwrapped
    here.reset(seed=episodes)  # warm up
    _, wall, steps = play(here, episodes)
    here_rate = steps / wall
    made = gym.make(box_installed_env(env_id)).unwrapped
    if not isinstance(made, BoxedEnv):
        raise TypeError(f"{env_id}'s boxed twin is not a BoxedEnv")
    made.close()
    boxed_class = type(made)
    rates, started = {}, {}
    for spares in (True, False):
        with BoxPool(spares=spares) as pool:
            boxed_class.pool = pool
            env = boxed_class()
            env.reset(seed=episodes)
            label = "boxed, successors in the background" if spares else "boxed, successors started when needed"
            _, wall, steps = play(env, episodes)
            rates[label] = steps / wall
            started[label] = (pool.started, pool.started_in_background)
            env.close()
    boxed_class.pool = None
    line = ", ".join(
        f"{label} {rate:.0f} ({rate / here_rate:.0%}; {started[label][0]} boxes started, "
        f"{started[label][1]} of them in the background)"
        for label, rate in rates.items()
    )
    print(f"{env_id}, {episodes} episodes in a row, steps/s: in-process {here_rate:.0f}, {line}")


def grpo_step_median(env_id: str, model: str, steps: int, out: Path) -> tuple[float, float]:
    """The median GRPO step time (seconds) of ``steps`` steps on ``env_id`` (K=4, batch 4, 64 tokens), and the
    tokens the run trained on (equal both ways when both generated the same completions)."""
    from trace_envs.training import TrainConfig, train

    config = TrainConfig(
        env_ids=[env_id],
        max_steps=steps,
        num_generations=4,
        per_device_train_batch_size=4,
        max_completion_length=64,
        num_seeds=16,
        save_steps=10_000,
    )
    meta = train(config, model, out, resume=False, progress=lambda *_: None)
    tokens = max((float(e["num_tokens"]) for e in meta.curve if "num_tokens" in e), default=0.0)
    return statistics.median(e["step_time"] for e in meta.curve if "step_time" in e), tokens


def grpo_steps(env_id: str, steps: int, rounds: int) -> None:
    """GRPO on the tiny model both ways, ``rounds`` times, alternating which way goes first.

    Both ways train on the same seeds with the same sampling seed, so they generate the same tokens and only
    the env calls differ; alternating the order keeps a drift of the machine out of the ratio."""
    import torch

    from trace_envs.evaluation.stats import bootstrap_interval
    from trace_envs.llm.tiny_model import build_tiny_model
    from trace_envs.registry import box_installed_env

    torch.set_num_threads(1)
    ways = {"in-process": env_id, "boxed": box_installed_env(env_id)}
    ratios: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_tiny_model(Path(tmp) / "tiny"))
        for round_ in range(rounds):
            order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
            runs = {way: grpo_step_median(ways[way], model, steps, Path(tmp) / f"{way}-{round_}") for way in order}
            medians = {way: median for way, (median, _) in runs.items()}
            same = "same tokens" if runs["boxed"][1] == runs["in-process"][1] else "DIFFERENT tokens"
            ratios.append(medians["boxed"] / medians["in-process"] - 1)
            print(
                f"GRPO step on the tiny model ({env_id}, K=4, batch 4, 64 tokens), round {round_ + 1}: median "
                f"{medians['in-process']:.3f}s in-process, {medians['boxed']:.3f}s boxed ({ratios[-1]:+.1%}) "
                f"over {steps} steps, {order[0]} first, {same} both ways"
            )
    if rounds > 1:
        interval = bootstrap_interval(ratios, resamples=2000, level=0.95, seed=0)
        spread = f", 95% interval of the mean {interval.low:+.1%} to {interval.high:+.1%}" if interval else ""
        print(
            f"GRPO boxed vs in-process over {rounds} rounds: median {statistics.median(ratios):+.1%}, "
            f"mean {statistics.fmean(ratios):+.1%}{spread}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=50, help="Reference episodes per env and way.")
    parser.add_argument("--boxes", type=int, default=5, help="Boxes started to time a start.")
    parser.add_argument("--train-steps", type=int, default=3, help="GRPO steps per way (0: skip training).")
    parser.add_argument(
        "--train-rounds", type=int, default=1, help="GRPO runs per way, alternating which way goes first."
    )
    parser.add_argument("--train-env", default="trace/order-cancel-v0")
    parser.add_argument(
        "--long-episodes",
        type=int,
        default=3000,
        help="Episodes of the long run of --train-env (boxes replaced as they are used up; 0: skip it).",
    )
    args = parser.parse_args()
    if args.train_rounds < 1:
        parser.error(f"--train-rounds must be at least 1, got {args.train_rounds}")

    import trace_envs  # noqa: F401  (registers the shipped envs)

    for env_id in shipped_env_ids():
        compare_steps(env_id, args.episodes)
    box_start(args.boxes)
    if args.long_episodes > 0:
        long_run(args.train_env, args.long_episodes)
    if args.train_steps > 0:
        grpo_steps(args.train_env, args.train_steps, args.train_rounds)


if __name__ == "__main__":
    main()
