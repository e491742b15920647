"""GRPO step time on CPU with the tiny offline model (prints one line per setting).

Usage: OMP_NUM_THREADS=1 python benchmarks/train_step.py [--env trace/order-cancel-v0] [--steps 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _quiet(step: int, total: int, entry: dict[str, float]) -> None:
    """Progress hook that prints nothing (also silences the trainer's per-step log lines)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="trace/order-cancel-v0")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--model", default=None, help="Base model (default: a fresh tiny model).")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    from trace_envs.llm.tiny_model import build_tiny_model
    from trace_envs.training import TrainConfig, train

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(build_tiny_model(Path(tmp) / "tiny"))
        for k, batch, length in [(4, 4, 64), (4, 8, 128), (8, 8, 256)]:
            config = TrainConfig(
                env_ids=[args.env],
                max_steps=args.steps,
                num_generations=k,
                per_device_train_batch_size=batch,
                max_completion_length=length,
                num_seeds=64,
                save_steps=10_000,
            )
            start, cpu = time.perf_counter(), time.process_time()
            meta = train(config, model, Path(tmp) / f"a-{k}-{batch}-{length}", resume=False, progress=_quiet)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            times = [e["step_time"] for e in meta.curve if "step_time" in e]
            print(
                f"{args.env} K={k} batch={batch} max_completion_length={length}: "
                f"step median {statistics.median(times):.2f}s (min {min(times):.2f}, max {max(times):.2f}) "
                f"over {len(times)} steps; whole run incl. setup {wall:.1f}s wall, {cpu:.1f}s CPU of this process"
            )


if __name__ == "__main__":
    main()
