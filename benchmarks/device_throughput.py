"""Device domain throughput: tool calls/s, env reset cost, milestone evaluation cost, oracle episodes/s.

    OMP_NUM_THREADS=1 python benchmarks/device_throughput.py [--rounds 5]

Single process, one core; every number is the best of ``--rounds`` runs (the least-disturbed run on a
shared machine). Prints Markdown rows for docs/performance.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from trace_envs.core import STOP_TOKEN, ToolCall
from trace_envs.domains.device import BASE_NOW, FULL_TOOLSET, build_base_world, dump_world, load_world
from trace_envs.targets.device import DeviceEnv

READS = [
    ToolCall(name="get_wifi_status"),
    ToolCall(name="get_current_timestamp"),
    ToolCall(name="timestamp_to_datetime_info", arguments={"timestamp": BASE_NOW}),
    ToolCall(name="shift_timestamp", arguments={"timestamp": BASE_NOW, "days": 3}),
    ToolCall(name="search_contacts", arguments={"name": "Fredrik"}),
    ToolCall(name="search_messages", arguments={"content": "keep me posted"}),
    ToolCall(name="search_reminder", arguments={"reminder_timestamp_lowerbound": BASE_NOW}),
    ToolCall(name="search_holiday", arguments={"holiday_name": "Christmas Day", "year": 2026}),
    ToolCall(name="unit_conversion", arguments={"amount": 10, "from_unit": "mile", "to_unit": "km"}),
    ToolCall(name="set_wifi_status", arguments={"on": "yes"}),  # a type error
]
WRITES = [
    ToolCall(name="add_reminder", arguments={"content": "Buy milk", "reminder_timestamp": BASE_NOW + 3600}),
    ToolCall(name="send_message_with_phone_number", arguments={"phone_number": "+12453344098", "content": "hi"}),
    ToolCall(name="add_contact", arguments={"name": "Alex", "phone_number": "+14155550123"}),
    ToolCall(name="set_low_battery_mode_status", arguments={"on": True}),
    ToolCall(name="set_low_battery_mode_status", arguments={"on": False}),
]


def best_of(rounds: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(rounds))


def calls_per_second(calls: list[ToolCall], repeat: int) -> Callable[[], float]:
    def run() -> float:
        state = build_base_world()
        start = time.perf_counter()
        for _ in range(repeat):
            for call in calls:
                FULL_TOOLSET.execute(state, call)
        return (time.perf_counter() - start) / (repeat * len(calls))

    return run


def reset_cost(env: DeviceEnv, seeds: range) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        for seed in seeds:
            env.reset(seed=seed)
        return (time.perf_counter() - start) / len(seeds)

    return run


def oracle_episode(env: DeviceEnv, seeds: range) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        for seed in seeds:
            env.reset(seed=seed)
            for action in [*env.oracle_actions(), STOP_TOKEN]:
                _, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    break
        return (time.perf_counter() - start) / len(seeds)

    return run


def verify_cost(env: DeviceEnv, padding: int) -> Callable[[], float]:
    """verify() after the oracle plus ``padding`` extra read calls (a long trajectory)."""
    env.reset(seed=0)
    for _ in range(padding):
        env.step('{"name": "get_current_timestamp", "arguments": {}}')
    for action in env.oracle_actions()[:-1]:
        env.step(action)

    def run() -> float:
        start = time.perf_counter()
        env.verify()
        return time.perf_counter() - start

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = args.rounds
    rows: list[tuple[str, str]] = []
    read = best_of(rounds, calls_per_second(READS, 200))
    write = best_of(rounds, calls_per_second(WRITES, 100))
    rows.append(
        ("read/utility tool calls/s (10-call mix incl. fuzzy search, holidays, a type error)", f"{1 / read:,.0f}")
    )
    rows.append(("write tool calls/s (reminder, message, contact, settings)", f"{1 / write:,.0f}"))
    world = dump_world(build_base_world())
    load = best_of(rounds, lambda: _timed(lambda: load_world(world), 500))
    rows.append(("load a base world from JSON tables (ms)", f"{load * 1000:.3f}"))
    generated = DeviceEnv()
    builtin = DeviceEnv(source="builtin")
    rows.append(
        (
            "reset, generated scenario (ms, mean over 200 seeds)",
            f"{best_of(rounds, reset_cost(generated, range(200))) * 1000:.2f}",
        )
    )
    rows.append(
        (
            "reset, built-in scenario (ms, mean over 200 seeds)",
            f"{best_of(rounds, reset_cost(builtin, range(200))) * 1000:.2f}",
        )
    )
    rows.append(
        (
            "oracle episode incl. verify, generated (ms)",
            f"{best_of(rounds, oracle_episode(generated, range(100))) * 1000:.2f}",
        )
    )
    rows.append(
        (
            "oracle episode incl. verify, built-in (ms)",
            f"{best_of(rounds, oracle_episode(builtin, range(100))) * 1000:.2f}",
        )
    )
    long_env = DeviceEnv(scenario="days_until_christmas_wifi_off")
    for padding in (0, 20):
        cost = best_of(rounds, verify_cost(long_env, padding))
        rows.append(
            (
                f"verify (milestone DAG search), oracle minus last message + {padding} extra calls (ms)",
                f"{cost * 1000:.2f}",
            )
        )
    print("| measure | value |\n| --- | ---: |")
    for name, value in rows:
        print(f"| {name} | {value} |")


def _timed(fn: Callable[[], object], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


if __name__ == "__main__":
    main()
