"""Synthesis against a real model: rounds to pass, the gate that stopped each failed round, seconds and tokens.

    python benchmarks/synthesis_real_model.py --model SPEC [--capabilities benchmarks/data/real_model_capabilities.json]
        [--out real-model-run/] [--rounds 3] [--concurrency 6] [--seeds 50] [--fuzz 50] [--timeout-s 2400]
        [--data ../shared/data/tau2] [--only NAME ...]

SPEC is any model spec of the library (``anthropic:<model>``, ``openai:<base_url>#<model>``, ``hf:<path>``);
``openai:http://127.0.0.1:8765/v1#relay`` is a person or an agent answering through
``benchmarks/relay_endpoint.py``. Each capability of the file (name, target, description and the analysis
evidence: failure patterns and trajectory excerpts) goes through :func:`trace_envs.synthesis.synthesize`, the
function ``trace-envs synthesize`` runs, with real generation (the catalogue is refused) and at most
``--rounds`` rounds; ``--concurrency`` capabilities run at once. Resumable: every round is kept under
``OUT/envs/attempts/`` and every finished capability in ``OUT/rows/<name>.json``, so a killed run, rerun with
the same arguments, asks nothing twice. Writes ``OUT/results.json`` and ``OUT/results.md`` (the table for
docs/synthesis.md). A capability whose generator failed (endpoint down, timeout) is reported and left
unfinished: rerun to resume it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError
from rich.console import Console

from trace_envs.synthesis import SynthesisRequest, SynthesisSettings, make_generator, synthesize
from trace_envs.synthesis.generation.attempts import AttemptStore
from trace_envs.synthesis.generation.batch import build_shared_inputs
from trace_envs.synthesis.generation.generators import CATALOGUE, Generator

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CAPABILITIES = ROOT / "benchmarks" / "data" / "real_model_capabilities.json"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "tau2"
console = Console(highlight=False, soft_wrap=True)


class RoundRow(BaseModel):
    """One round of one capability."""

    round: int
    passed: bool
    stopped_by: str | None = None
    first_finding: str = ""
    gate_seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0


class CapabilityRow(BaseModel):
    """What became of one capability."""

    capability: str
    target: str
    status: str = Field(description="passed, failed (every round rejected) or error (rerun to resume)")
    rounds_to_pass: int | None = None
    rounds: list[RoundRow] = Field(default_factory=list)
    seconds: float = Field(default=0.0, description="Wall seconds of the run that finished it (replies included).")
    gate_seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str = ""


def load_requests(path: Path) -> list[SynthesisRequest]:
    """The capabilities file's requests (exit 2 with one line naming the problem)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["capabilities"]
        requests = [
            SynthesisRequest.model_validate({key: e[key] for key in SynthesisRequest.model_fields if key in e})
            for e in entries
        ]
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SystemExit(f"--capabilities: {path} is not a capabilities file ({first})") from None
    names = [r.capability for r in requests]
    if len(set(names)) != len(names):
        raise SystemExit(f"--capabilities: {path} names a capability twice")
    return requests


def round_rows(out: Path, capability: str, attempts: int) -> list[RoundRow]:
    """The rounds of a finished synthesis, read back from its attempt store."""
    store = AttemptStore(out, capability)
    rows = []
    for number in range(1, attempts + 1):
        attempt = store.attempt(number)
        report, generation = attempt.report(), attempt.generation()
        row = RoundRow(round=number, passed=bool(report and report.passed))
        if report is not None:
            row.stopped_by = report.stopped_by
            row.gate_seconds = report.seconds
            failed = [f for r in report.results if r.status == "failed" for f in r.findings]
            row.first_finding = failed[0].render() if failed else ""
        if generation is not None:
            row.input_tokens = generation.usage.input_tokens
            row.output_tokens = generation.usage.output_tokens
        rows.append(row)
    return rows


def run_one(request: SynthesisRequest, generator: Generator, out: Path, settings: SynthesisSettings) -> CapabilityRow:
    """Synthesise one capability (resuming its saved rounds) and summarise it."""
    started = time.monotonic()

    def progress(capability: str, message: str) -> None:
        console.print(f"{capability}: {message}", markup=False)

    try:
        result = synthesize(request, request.target, generator, out=out / "envs", settings=settings, progress=progress)
    except Exception as exc:  # an endpoint or generator failure: this capability is unfinished
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return CapabilityRow(capability=request.capability, target=request.target, status="error", error=error)
    rounds = round_rows(out / "envs", request.capability, result.attempts)
    passed = result.status == "passed"
    return CapabilityRow(
        capability=request.capability,
        target=request.target,
        status="passed" if passed else "failed",
        rounds_to_pass=result.attempts if passed else None,
        rounds=rounds,
        seconds=round(time.monotonic() - started, 1),
        gate_seconds=round(sum(r.gate_seconds for r in rounds), 1),
        input_tokens=sum(r.input_tokens for r in rounds),
        output_tokens=sum(r.output_tokens for r in rounds),
    )


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|").replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown(rows: list[CapabilityRow], model: str) -> str:
    """The results table (for docs/synthesis.md)."""
    lines = [
        f"Model: `{model}`.",
        "",
        "| capability | target | result | rounds to pass | failed rounds: gate, first finding | seconds | gate seconds "
        "| input tokens | output tokens |",
        "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        failed = "; ".join(
            f"round {r.round}: {r.stopped_by}: {_cell(r.first_finding)}" for r in row.rounds if not r.passed
        )
        result = row.status if row.status != "error" else f"error ({_cell(row.error, 80)})"
        lines.append(
            f"| {row.capability} | {row.target} | {result} | {row.rounds_to_pass or '-'} | {failed or '-'} "
            f"| {row.seconds:.0f} | {row.gate_seconds:.0f} | {row.input_tokens} | {row.output_tokens} |"
        )
    passed = [r for r in rows if r.status == "passed"]
    first = [r for r in passed if r.rounds_to_pass == 1]
    lines += ["", f"Passed {len(passed)} of {len(rows)}, {len(first)} in round 1."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="model spec, e.g. openai:http://127.0.0.1:8765/v1#relay")
    parser.add_argument("--capabilities", type=Path, default=DEFAULT_CAPABILITIES)
    parser.add_argument("--out", type=Path, default=Path("real-model-run"))
    parser.add_argument("--rounds", type=int, default=3, choices=range(1, 21), metavar="1..20")
    parser.add_argument("--concurrency", type=int, default=6, help="capabilities synthesised at once")
    parser.add_argument("--seeds", type=int, default=50, help="seeds of the property suite")
    parser.add_argument("--fuzz", type=int, default=50, help="hypothesis examples of the any-action check")
    parser.add_argument("--timeout-s", type=float, default=2400.0, help="the client's per-request timeout")
    parser.add_argument("--max-tokens", type=int, default=16_000, help="token cap of one reply")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA if DEFAULT_DATA.is_dir() else None)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="synthesise only these capabilities")
    args = parser.parse_args(argv)
    for name in ("concurrency", "seeds", "fuzz", "max_tokens"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.timeout_s <= 0:
        parser.error("--timeout-s must be > 0")
    if args.model == CATALOGUE:
        parser.error("--model: the catalogue reuses shipped envs; pass a model spec (this benchmark measures a model)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        requests = load_requests(args.capabilities)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.only:
        unknown = sorted(set(args.only) - {r.capability for r in requests})
        if unknown:
            print(f"--only: {', '.join(unknown)} not in {args.capabilities}", file=sys.stderr)
            return 2
        requests = [r for r in requests if r.capability in args.only]
    try:
        generator = make_generator(args.model, sampling={"max_tokens": args.max_tokens}, timeout_s=args.timeout_s)
    except ValueError as exc:
        print(f"--model: {exc}", file=sys.stderr)
        return 2
    settings = SynthesisSettings(rounds=args.rounds, seeds=args.seeds, fuzz_examples=args.fuzz, data=args.data)
    rows_dir = args.out / "rows"
    rows_dir.mkdir(parents=True, exist_ok=True)
    done = {r.capability: CapabilityRow.model_validate_json(p.read_text()) for r in requests
            if (p := rows_dir / f"{r.capability}.json").exists()}  # fmt: skip
    todo = [r for r in requests if r.capability not in done]
    console.print(f"{len(done)} capabilities finished before, {len(todo)} to run with {generator.spec}")
    lock = threading.Lock()

    def one(request: SynthesisRequest) -> CapabilityRow:
        row = run_one(request, generator, args.out, settings)
        if row.status != "error":
            path = rows_dir / f"{row.capability}.json"
            path.with_suffix(".tmp").write_text(row.model_dump_json(indent=1), encoding="utf-8")
            os.replace(path.with_suffix(".tmp"), path)
        with lock:
            console.print(f"{row.capability}: {row.status} (rounds {len(row.rounds)}, {row.seconds:.0f} s)")
        return row

    build_shared_inputs()  # parse every source once in this thread (ast in threads, see its docstring)
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        finished = {row.capability: row for row in pool.map(one, todo)}
    rows = [done.get(r.capability) or finished[r.capability] for r in requests]
    results = {
        "model": generator.spec,
        "rounds": args.rounds,
        "seeds": args.seeds,
        "rows": [r.model_dump() for r in rows],
    }
    (args.out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    table = markdown(rows, generator.spec)
    (args.out / "results.md").write_text(table, encoding="utf-8")
    console.print(table, markup=False)
    return 2 if any(row.status == "error" for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
