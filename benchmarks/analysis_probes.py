"""Throughput of the offline analysis: probe labelling per episode and a whole probes analysis
(R runs, statistics, analysis.json, report and plots) over scripted episodes of the shipped envs.

    OMP_NUM_THREADS=1 python benchmarks/analysis_probes.py --seeds 20 --runs 10
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import gymnasium as gym

import trace_envs  # noqa: F401
from trace_envs.analysis import AnalysisConfig, probe_labels, run_analysis
from trace_envs.registry.capabilities import capability_envs
from trace_envs.rollout import TrajectoryStore, make_policy, run_episode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    records = []
    envs = {env_id: capability for capability, ids in capability_envs().items() for env_id in ids}
    for env_id, capability in envs.items():
        env = gym.make(env_id, disable_env_checker=True)
        for spec in ("oracle", f"flawed:{capability}"):
            records += [run_episode(env, make_policy(spec, seed=s), env_id=env_id, seed=s) for s in range(args.seeds)]
    start = time.perf_counter()
    for record in records:
        probe_labels(record)
    per_episode = (time.perf_counter() - start) / len(records)
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "runs.jsonl"
        with TrajectoryStore(store, fsync=False) as writer:
            for record in records:
                writer.append(record)
        start = time.perf_counter()
        result = run_analysis(store, AnalysisConfig(analyst="probes", runs=args.runs), Path(folder) / "out")
        total = time.perf_counter() - start
    print(f"episodes: {len(records)} from {len(envs)} capability envs")
    print(f"probe labelling: {1000 * per_episode:.2f} ms per episode (six probes)")
    print(f"full probes analysis, {args.runs} runs: {total:.2f} s ({len(result.labels)} label rows, report and plots)")


if __name__ == "__main__":
    main()
