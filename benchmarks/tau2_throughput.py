"""tau2 domains: tool calls/s, per-episode reset cost (journal restore vs copy.deepcopy), memory, gold replay time.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/tau2_throughput.py [--data ../shared/data/tau2] [--domain retail airline]

``--data`` (or ``$TRACE_ENVS_TAU2_DATA``) is a folder holding tau2 domain folders (db.json, tasks.json).
Reset is measured side by side in one run: after each task's gold actions, the journal restore that
our envs use, against ``copy.deepcopy`` of the same loaded database (what tau2 does per episode).
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import statistics
import time
import tracemalloc
from pathlib import Path
from typing import Any

from trace_envs.core import ToolCall
from trace_envs.targets.tau2 import load_domain_data
from trace_envs.targets.tau2.env import tau2_domain


def _timeit(fn: Any, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def bench_domain(data_root: Path, name: str, deepcopies: int) -> dict[str, Any]:
    data = load_domain_data(data_root, name)
    domain = tau2_domain(name)
    results: dict[str, Any] = {"domain": name, "db_bytes": data.db_path.stat().st_size}

    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    db = domain.load_file(data.db_path)
    results["load_s"] = time.perf_counter() - start
    results["db_memory_mb"] = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()

    # gold replay of every task (tool calls + final canonical hash), journal restore between tasks
    tasks = data.tasks
    domain.state_hash(db)  # warm the per-record hash cache, as an env does at its first reset
    calls = 0
    start = time.perf_counter()
    for task in tasks:
        for action in task.gold_actions:
            domain.toolset.invoke(db, ToolCall(name=action.name, arguments=action.arguments))
            calls += 1
        domain.state_hash(db)
        db.restore()
    results["gold_replay_s"] = time.perf_counter() - start
    results["gold_tasks"] = len(tasks)

    # tool calls per second: every gold call replayed without hashing
    repeat = 5
    start = time.perf_counter()
    for _ in range(repeat):
        for task in tasks:
            for action in task.gold_actions:
                domain.toolset.invoke(db, ToolCall(name=action.name, arguments=action.arguments))
            db.restore()
    elapsed = time.perf_counter() - start
    results["tool_calls_per_s"] = calls * repeat / elapsed

    # reset cost side by side: journal (record copies taken by touch + restore) vs deepcopy of the loaded DB
    restores, journal_costs, touched = [], [], []
    for task in tasks:
        for action in task.gold_actions:
            domain.toolset.invoke(db, ToolCall(name=action.name, arguments=action.arguments))
        saved = [entry[2] for entry in db._journal]
        start = time.perf_counter()
        for record in saved:  # what touch() paid during the episode: one deep copy per touched record
            copy.deepcopy(record)
        copy_cost = time.perf_counter() - start
        touched.append(db.touched_count)
        start = time.perf_counter()
        db.restore()
        restores.append(time.perf_counter() - start)
        journal_costs.append(restores[-1] + copy_cost)
    results["restore_mean_s"] = statistics.mean(restores)
    results["journal_mean_s"] = statistics.mean(journal_costs)
    results["journal_max_s"] = max(journal_costs)
    results["touched_mean"] = statistics.mean(touched)
    gc.collect()
    tracemalloc.start()
    journal_peaks = []
    for task in tasks:
        base = tracemalloc.get_traced_memory()[0]
        for action in task.gold_actions:
            domain.toolset.invoke(db, ToolCall(name=action.name, arguments=action.arguments))
        journal_peaks.append(tracemalloc.get_traced_memory()[0] - base)
        db.restore()
    tracemalloc.stop()
    results["journal_memory_kb_max"] = max(journal_peaks) / 1024
    results["journal_memory_kb_mean"] = statistics.mean(journal_peaks) / 1024
    copies = _timeit(lambda: copy.deepcopy(db), deepcopies)
    results["deepcopy_mean_s"] = statistics.mean(copies)
    gc.collect()
    tracemalloc.start()
    clone = copy.deepcopy(db)
    results["deepcopy_memory_mb"] = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()
    del clone
    results["reset_speedup"] = results["deepcopy_mean_s"] / results["journal_mean_s"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get(
        "TRACE_ENVS_TAU2_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2")
    )
    parser.add_argument("--data", default=default, help="folder holding tau2 domain folders")
    parser.add_argument("--domain", nargs="+", default=["retail", "airline"])
    parser.add_argument("--deepcopies", type=int, default=10, help="deepcopy repetitions for the comparison")
    args = parser.parse_args()
    for name in args.domain:
        r = bench_domain(Path(args.data), name, args.deepcopies)
        print(f"## {name} (db.json {r['db_bytes'] / 2**20:.1f} MiB, {r['gold_tasks']} tasks)")
        print(
            f"load db.json                 {r['load_s'] * 1e3:9.1f} ms   ({r['db_memory_mb']:.1f} MiB of Python objects)"
        )
        print(f"tool calls/s (gold calls)    {r['tool_calls_per_s']:9.0f}")
        print(f"gold replay, all tasks       {r['gold_replay_s']:9.2f} s    (tool calls + canonical hash per task)")
        print(
            f"reset: journal               {r['journal_mean_s'] * 1e6:9.1f} us   mean per episode (max "
            f"{r['journal_max_s'] * 1e6:.0f} us; restore alone {r['restore_mean_s'] * 1e6:.1f} us; "
            f"{r['touched_mean']:.1f} records touched)"
        )
        print(f"reset: copy.deepcopy(db)     {r['deepcopy_mean_s'] * 1e3:9.1f} ms   mean of {args.deepcopies}")
        print(f"reset speed-up               {r['reset_speedup']:9.0f} x")
        print(
            f"memory per episode           {r['journal_memory_kb_mean']:9.1f} KiB  mean (max {r['journal_memory_kb_max']:.0f}"
            " KiB) allocated by an episode's calls + journal, vs "
            f"{r['deepcopy_memory_mb']:.1f} MiB per deep copy"
        )


if __name__ == "__main__":
    main()
