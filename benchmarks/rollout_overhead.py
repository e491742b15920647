"""Rollout loop benchmark: the loop's own cost per step, and concurrent vs sequential throughput.

1. Overhead: an instant scripted policy (the oracle) on trace/order-cancel-v0, through the batch
   runner with the JSONL store (fsync per episode). Everything measured is loop cost: action
   parsing, env step, message bookkeeping, record building, store append. Reported per step and
   as a share of a 20 ms model answer (target < 1%).
2. Throughput: a model-backed policy (the real ``openai`` SDK) against a local fake endpoint in a
   separate process that answers every request after 20 ms; 64 episodes in flight vs one at a time
   (target >= 30x more steps per second), in one process and sharded over ``--workers`` processes.
   Each run reports the end-to-end rate (process start-up included) and the steady state: the steps
   of the episodes that finished after the first one, over the time between the first and the last.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/rollout_overhead.py [--episodes 2000] [--workers 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

import trace_envs  # noqa: F401  (registers the envs)
from trace_envs.llm.fake_server import FakeModelServer, order_cancel_agent
from trace_envs.rollout import EpisodeRecord, TrajectoryStore, make_jobs, run_rollouts

ENV_ID = "trace/order-cancel-v0"
ANSWER_S = 0.020


def serve(port_queue: multiprocessing.Queue, delay: float) -> None:  # type: ignore[type-arg]
    server = FakeModelServer(order_cancel_agent, delay_s=delay)
    port_queue.put(server.port)
    server.serve_forever()


def overhead(episodes: int, repeats: int) -> dict[str, float]:
    """Best of ``repeats``: wall and CPU time per step, and the env's share (reset/step/verify)."""
    best: dict[str, float] = {}
    for _ in range(repeats):
        records: list[EpisodeRecord] = []
        with tempfile.TemporaryDirectory() as tmp, TrajectoryStore(Path(tmp) / "x.jsonl") as store:
            cpu = time.process_time()
            summary = run_rollouts(
                make_jobs([ENV_ID], range(episodes)), "oracle", store=store, concurrency=1, on_episode=records.append
            )
            cpu = time.process_time() - cpu
        steps = summary.steps
        env_s = sum(r.timings.env_s for r in records)
        row = {
            "steps": steps,
            "wall_us": summary.wall_s / steps * 1e6,
            "cpu_us": cpu / steps * 1e6,
            "env_us": env_s / steps * 1e6,
        }
        if not best or row["wall_us"] < best["wall_us"]:
            best = row
    return best


def throughput(url: str, episodes: int, concurrency: int, workers: int = 1) -> dict[str, float]:
    """Steps per second of ``episodes`` order-cancel episodes played by the fake agent endpoint."""
    spec = f"openai:{url}#bench-agent"
    finished: list[tuple[float, int]] = []
    cpu = time.process_time()
    summary = run_rollouts(
        make_jobs([ENV_ID], range(episodes)),
        spec,
        concurrency=concurrency,
        workers=workers,
        on_episode=lambda record: finished.append((time.perf_counter(), record.num_steps)),
    )
    cpu = time.process_time() - cpu
    assert summary.failed == 0 and summary.pass_rate == 1.0, summary
    steady_steps = sum(steps for _, steps in finished[1:])
    return {
        "steps": summary.steps,
        "wall_s": summary.wall_s,
        "steps_per_s": summary.steps / summary.wall_s,
        "steady_steps_per_s": steady_steps / (finished[-1][0] - finished[0][0]),
        "cpu_ms_per_step": cpu / summary.steps * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2000, help="episodes for the overhead measurement")
    parser.add_argument("--repeats", type=int, default=3, help="best of N for the overhead measurement")
    parser.add_argument("--sequential-episodes", type=int, default=24)
    parser.add_argument("--concurrent-episodes", type=int, default=1024)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="processes for the sharded run (1: skip it)")
    args = parser.parse_args()

    loop = overhead(args.episodes, args.repeats)
    print(
        f"loop overhead: {loop['wall_us']:.0f} us/step wall, {loop['cpu_us']:.0f} us/step CPU, of which the env "
        f"(reset/step/verify) {loop['env_us']:.0f} us, over {loop['steps']:.0f} steps -> "
        f"{loop['wall_us'] / 1e6 / ANSWER_S:.2%} (wall) / {loop['cpu_us'] / 1e6 / ANSWER_S:.2%} (CPU) of a 20 ms answer "
        "(target < 1%)"
    )

    context = multiprocessing.get_context("fork")
    ports: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
    process = context.Process(target=serve, args=(ports, ANSWER_S), daemon=True)
    process.start()
    try:
        url = f"http://127.0.0.1:{ports.get(timeout=30)}/v1"
        throughput(url, 4, 4)  # warm up connections and imports
        one = throughput(url, args.sequential_episodes, 1)
        many = throughput(url, args.concurrent_episodes, args.concurrency)
        sharded = (
            throughput(url, args.concurrent_episodes, args.concurrency, args.workers) if args.workers > 1 else None
        )
    finally:
        process.terminate()
        process.join(timeout=10)
    cpu = many["cpu_ms_per_step"] / 1e3
    print(f"sequential: {one['steps_per_s']:.1f} steps/s ({one['steps']:.0f} steps, {one['wall_s']:.2f}s)")
    print(
        f"{args.concurrency} concurrent, 1 process: {many['steps_per_s']:.1f} steps/s end to end, "
        f"{many['steady_steps_per_s']:.1f} steady ({many['steps']:.0f} steps, {many['wall_s']:.2f}s); "
        f"client CPU {many['cpu_ms_per_step']:.2f} ms/step, so at most {(ANSWER_S + cpu) / cpu:.1f}x per free core"
    )
    print(
        f"  speedup {many['steps_per_s'] / one['steps_per_s']:.1f}x end to end, "
        f"{many['steady_steps_per_s'] / one['steps_per_s']:.1f}x steady (target >= 30x)"
    )
    if sharded is not None:
        print(
            f"{args.concurrency} concurrent, {args.workers} worker processes: {sharded['steps_per_s']:.1f} steps/s "
            f"end to end, {sharded['steady_steps_per_s']:.1f} steady ({sharded['steps']:.0f} steps, "
            f"{sharded['wall_s']:.2f}s)"
        )
        print(
            f"  speedup {sharded['steps_per_s'] / one['steps_per_s']:.1f}x end to end, "
            f"{sharded['steady_steps_per_s'] / one['steps_per_s']:.1f}x steady (target >= 30x)"
        )
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
