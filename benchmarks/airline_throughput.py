"""Airline domain throughput: tool calls/s, reset cost (journal vs deepcopy), hashing, gold replay, memory.

    python benchmarks/airline_throughput.py [--data ../shared/data/tau2/airline] [--rounds 5]

With no tau2 airline folder (db.json + tasks.json) it measures a generated database of the same size
(300 flights, 500 users, 2,000 reservations) and skips the gold replay. Single process, one core;
every number is the best of ``--rounds`` runs. Prints Markdown rows for docs/performance.md.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import random
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_envs.core import ToolCall
from trace_envs.domains.airline import AIRLINE, AirlineGenConfig, FlightDB, generate_airline_db, load_db

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "tau2" / "airline"


def best_of(rounds: int, run: Callable[[], float]) -> float:
    """The smallest of ``rounds`` timings (the least-disturbed run on a shared machine)."""
    return min(run() for _ in range(rounds))


def read_calls(db: FlightDB, rng: random.Random, count: int) -> list[ToolCall]:
    """A mix of the six read tools on random existing records (what agents mostly call)."""
    users, reservations, flights = list(db.users), list(db.reservations), list(db.flights)
    airports = sorted({f.origin for f in db.flights.values()})
    calls = []
    for index in range(count):
        kind = index % 6
        if kind == 0:
            calls.append(ToolCall(name="get_user_details", arguments={"user_id": rng.choice(users)}))
        elif kind == 1:
            calls.append(
                ToolCall(name="get_reservation_details", arguments={"reservation_id": rng.choice(reservations)})
            )
        elif kind == 2:
            origin, destination = rng.sample(airports, 2)
            day = f"2024-05-{rng.randint(16, 30)}"
            calls.append(
                ToolCall(
                    name="search_direct_flight", arguments={"origin": origin, "destination": destination, "date": day}
                )
            )
        elif kind == 3:
            origin, destination = rng.sample(airports, 2)
            day = f"2024-05-{rng.randint(16, 30)}"
            calls.append(
                ToolCall(
                    name="search_onestop_flight", arguments={"origin": origin, "destination": destination, "date": day}
                )
            )
        elif kind == 4:
            day = f"2024-05-{rng.randint(10, 30)}"
            calls.append(
                ToolCall(name="get_flight_status", arguments={"flight_number": rng.choice(flights), "date": day})
            )
        else:
            calls.append(ToolCall(name="list_all_airports", arguments={}))
    return calls


def write_calls(db: FlightDB, rng: random.Random, count: int) -> list[ToolCall]:
    """Write calls that succeed on the initial database: cancel, certificate, passengers, baggage."""
    reservations = list(db.reservations.values())
    calls = []
    for index in range(count):
        reservation = rng.choice(reservations)
        kind = index % 3
        if kind == 0:
            calls.append(ToolCall(name="cancel_reservation", arguments={"reservation_id": reservation.reservation_id}))
        elif kind == 1:
            calls.append(ToolCall(name="send_certificate", arguments={"user_id": reservation.user_id, "amount": 100}))
        else:
            people = [p.model_dump() for p in reservation.passengers]
            calls.append(
                ToolCall(
                    name="update_reservation_passengers",
                    arguments={"reservation_id": reservation.reservation_id, "passengers": people},
                )
            )
    return calls


def calls_per_second(db: FlightDB, calls: list[ToolCall], rounds: int, restore_every: int = 0) -> float:
    def run() -> float:
        db.restore()
        start = time.perf_counter()
        for index, call in enumerate(calls, start=1):
            AIRLINE.toolset.invoke(db, call)
            if restore_every and index % restore_every == 0:
                db.restore()
        elapsed = time.perf_counter() - start
        db.restore()
        return elapsed

    return len(calls) / best_of(rounds, run)


def gold_tasks(data: Path) -> list[dict[str, Any]]:
    tasks_file = data / "tasks.json"
    if not tasks_file.is_file():
        return []
    loaded: list[dict[str, Any]] = json.loads(tasks_file.read_text(encoding="utf-8"))
    return loaded


def replay(db: FlightDB, task: dict[str, Any]) -> None:
    for action in task["evaluation_criteria"]["actions"]:
        AIRLINE.toolset.invoke(db, ToolCall(name=action["name"], arguments=action["arguments"]))


def heap_bytes(build: Callable[[], Any]) -> tuple[int, Any]:
    """Python heap bytes held by what ``build`` returns (tracemalloc, after a collection)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a tau2 airline folder (db.json, tasks.json)")
    parser.add_argument("--rounds", type=int, default=5, help="repetitions per measurement (best is kept)")
    parser.add_argument("--calls", type=int, default=3000, help="tool calls per throughput round")
    args = parser.parse_args()

    source = "db.json (shared rebuild)"
    start = time.perf_counter()
    if (args.data / "db.json").is_file():
        db = load_db(args.data / "db.json")
    else:
        source = "generated (seed 0, 300 flights / 500 users / 2,000 reservations)"
        db = generate_airline_db(random.Random(0), AirlineGenConfig.benchmark_sized())
    load_s = time.perf_counter() - start
    rng = random.Random(0)
    reads = read_calls(db, rng, args.calls)
    writes = write_calls(db, rng, args.calls)
    tasks = gold_tasks(args.data) if source.startswith("db.json") else []

    read_rate = calls_per_second(db, reads, args.rounds)
    write_rate = calls_per_second(db, writes, args.rounds, restore_every=20)
    per_tool = {
        name: calls_per_second(db, [c for c in reads + writes if c.name == name], args.rounds, restore_every=20)
        for name in dict.fromkeys(c.name for c in reads + writes)
    }

    # Reset after an episode: the journal restore vs the deep copy tau2's own env makes per episode.
    episode = tasks[44] if len(tasks) > 44 else None  # task 44: many reads, 3 flight changes and cancels

    def dirty() -> None:
        if episode is not None:
            replay(db, episode)
        else:
            for call in writes[:12]:
                AIRLINE.toolset.invoke(db, call)

    def journal_reset() -> float:
        dirty()
        start = time.perf_counter()
        db.restore()
        return time.perf_counter() - start

    def deepcopy_reset() -> float:
        start = time.perf_counter()
        copy.deepcopy(db)
        return time.perf_counter() - start

    restore_s = best_of(args.rounds, journal_reset)
    deepcopy_s = best_of(args.rounds, deepcopy_reset)

    def hash_once() -> float:
        start = time.perf_counter()
        AIRLINE.state_hash(db)
        return time.perf_counter() - start

    hash_s = best_of(args.rounds, hash_once)

    replay_s = float("nan")
    if tasks:

        def replay_all() -> float:
            start = time.perf_counter()
            for task in tasks:
                db.restore()
                replay(db, task)
                AIRLINE.state_hash(db)
            db.restore()
            return time.perf_counter() - start

        replay_s = best_of(max(1, args.rounds // 2), replay_all)

    dirty()
    journal_bytes, _ = heap_bytes(lambda: [copy.deepcopy(saved) for _, _, saved in db._journal])
    db.restore()
    copy_bytes, _ = heap_bytes(lambda: copy.deepcopy(db))

    print(f"source: {source}; load {load_s:.2f} s; {args.rounds} rounds, best kept\n")
    print("| measure | value |")
    print("| --- | ---: |")
    print(f"| read tool calls/s (6-tool mix) | {read_rate:,.0f} |")
    print(f"| write tool calls/s (cancel/certificate/passengers, journaled) | {write_rate:,.0f} |")
    print(f"| reset by journal restore (ms) | {restore_s * 1e3:.3f} |")
    print(f"| reset by copy.deepcopy (ms) | {deepcopy_s * 1e3:.1f} |")
    print(f"| restore speed-up over deepcopy | {deepcopy_s / restore_s:,.0f}x |")
    for name, rate in per_tool.items():
        print(f"| `{name}` calls/s | {rate:,.0f} |")
    print(f"| canonical state hash (ms) | {hash_s * 1e3:.1f} |")
    if tasks:
        print(f"| replay all {len(tasks)} gold tasks + hash each (s) | {replay_s:.2f} |")
    print(f"| memory per episode: journal after the episode (KB) | {journal_bytes / 1024:.1f} |")
    print(f"| memory per episode: a deepcopy of the database (KB) | {copy_bytes / 1024:,.0f} |")


if __name__ == "__main__":
    main()
