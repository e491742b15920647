"""Seconds per module for the synthesis gates (everything but calibration), 50 seeds by default.

    python benchmarks/synthesis_gates.py [--seeds 50] [--fuzz 50] [--rounds 3] [--data ../shared/data/tau2]
                                         [--candidates 4 --jobs 1 2]

Validates the correct retail module of the test suite ``--rounds`` times and prints, per gate, the
best time, then where the sandbox spends it, plus the machine's load average (the two sandboxed
processes run in parallel, so a busy machine slows them). Prints Markdown rows for docs/synthesis.md.
With ``--candidates N``, then validates N distinct candidates (the module with a comment naming its
index, so each is a new source) with each ``--jobs`` value as the number validated at once, as
``trace-envs validate -j`` and ``trace-envs synthesize -j`` do, and prints the wall time of each.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trace_envs.synthesis import GateContext, ValidationReport, validate_file, validate_source

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "tests" / "synthesis" / "modules" / "retail_cancel.py"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "tau2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--fuzz", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--candidates", type=int, default=0, help="distinct candidates to validate in parallel")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="candidates validated at once")
    args = parser.parse_args()
    reports: list[ValidationReport] = []
    for _ in range(args.rounds):
        context = GateContext(
            target="retail",
            capability="precondition_verification",
            seeds=args.seeds,
            fuzz_examples=args.fuzz,
            data=args.data,
        )
        report = validate_file(MODULE, context)
        if not report.passed:
            raise SystemExit(report.table())
        reports.append(report)
    best, cold = min(reports, key=lambda r: r.seconds), reports[0]
    print(f"load average (1 min): {os.getloadavg()[0]:.1f}; cores: {os.cpu_count()}")
    print(f"total: best {best.seconds:.2f} s, all rounds {', '.join(f'{r.seconds:.2f}' for r in reports)}\n")
    print("| gate | first round (cold caches), s | best round, s |\n| --- | ---: | ---: |")
    for first, fastest in zip(cold.results, best.results, strict=True):
        print(f"| {first.gate} | {first.seconds:.3f} | {fastest.seconds:.3f} |")
    print(f"| **all gates** | **{cold.seconds:.2f}** | **{best.seconds:.2f}** |\n")
    execution = best.result("execution").details
    print(f"sandbox wall seconds (suite run, fingerprint run): {execution['wall_seconds']}")
    print("| inside the suite run | seconds |\n| --- | ---: |")
    for stage, seconds in execution["seconds"].items():
        print(f"| {stage} | {seconds:.3f} |")
    if args.candidates:
        parallel(args)


def parallel(args: argparse.Namespace) -> None:
    """Wall time of validating ``args.candidates`` distinct modules with each number of jobs."""
    source = MODULE.read_text(encoding="utf-8")
    print(
        "\n| candidates | validated at once | wall, s | per module, s | load average |\n| ---: | ---: | ---: | ---: | ---: |"
    )
    for jobs in args.jobs:
        sources = [f"{source}\n# candidate {jobs}-{index}\n" for index in range(args.candidates)]
        contexts = [
            GateContext(
                target="retail",
                capability="precondition_verification",
                seeds=args.seeds,
                fuzz_examples=args.fuzz,
                data=args.data,
                filename=f"candidate_{index}.py",
            )
            for index in range(args.candidates)
        ]
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            reports = list(pool.map(validate_source, sources, contexts))
        wall = time.perf_counter() - start
        if not all(r.passed for r in reports):
            raise SystemExit("\n".join(r.table() for r in reports if not r.passed))
        load = os.getloadavg()[0]
        print(f"| {args.candidates} | {jobs} | {wall:.1f} | {wall / args.candidates:.1f} | {load:.1f} |")


if __name__ == "__main__":
    main()
