"""CPU cost per request of the local fake model endpoint (``trace_envs.llm.fake_server``).

The server runs in its own process (``python -m trace_envs.llm.fake_server``) with a 20 ms answer delay;
the real ``openai`` SDK (aiohttp transport) keeps 64 requests in flight on keep-alive connections and
posts an order-cancel agent turn (system + user message, two tools). The server's CPU time (utime +
stime from ``/proc/<pid>/stat``, all threads) is read around the measured requests, after a warm-up.
On the 2-core machine the rollout benchmark runs on, this CPU is taken from the client under test.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/fake_server_cost.py [--requests 2000] [--concurrency 64]

To compare another version of the server, give the command that starts it (it must print its port on
its first line), e.g. the one before the asyncio rewrite:

    git show b305e03:trace_envs/llm/fake_server.py > /tmp/old_fake_server.py
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/fake_server_cost.py --server ".venv/bin/python /tmp/old_fake_server.py"
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import time
from typing import Any

import openai

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ').capitalize()} of one order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "description": "The order id, such as '#W0000001'."}},
                "required": ["order_id"],
            },
        },
    }
    for name in ("get_order_details", "cancel_order")
]
BODY: dict[str, Any] = {
    "model": "bench-agent",
    "messages": [
        {"role": "system", "content": "You are a customer service agent. Cancel pending orders only. " * 4},
        {"role": "user", "content": "Hi, please cancel my order #W0000001."},
    ],
    "tools": TOOLS,
    "temperature": 0.0,
}


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(url: str, requests: int, concurrency: int) -> float:
    """Send ``requests`` posts with ``concurrency`` in flight; returns the wall time."""
    async with openai.AsyncOpenAI(
        base_url=url, api_key="x", max_retries=0, http_client=openai.DefaultAioHttpClient()
    ) as client:
        remaining = iter(range(requests))

        async def worker() -> None:
            for _ in remaining:
                await client.post("/chat/completions", body=BODY, cast_to=bytes)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.020, help="the server's answer delay in seconds")
    parser.add_argument("--responder", default="trace_envs.llm.fake_server:order_cancel_agent")
    parser.add_argument("--repeats", type=int, default=5, help="measurements (the best and the median are reported)")
    parser.add_argument(
        "--server",
        default=f"{shlex.quote(sys.executable)} -m trace_envs.llm.fake_server",
        help="command that starts the server and prints its port first ('--responder R --delay D' are appended)",
    )
    args = parser.parse_args()

    command = [*shlex.split(args.server), "--responder", args.responder, "--delay", str(args.delay)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/v1"
        asyncio.run(load(url, 4 * args.concurrency, args.concurrency))  # warm up imports and code paths
        runs: list[tuple[float, float]] = []
        for _ in range(args.repeats):
            cpu = cpu_seconds(server.pid)
            client_cpu = time.process_time()
            wall = asyncio.run(load(url, args.requests, args.concurrency))
            cpu = cpu_seconds(server.pid) - cpu
            client_cpu = time.process_time() - client_cpu
            print(
                f"  {args.requests} requests, {args.concurrency} in flight: server CPU {cpu / args.requests * 1e3:.3f} "
                f"ms/request, client CPU {client_cpu / args.requests * 1e3:.3f} ms/request, wall {wall:.2f}s "
                f"({args.requests / wall:.0f} requests/s)"
            )
            runs.append((cpu, wall))
    finally:
        server.terminate()
        server.wait(timeout=10)
    per_request = sorted(cpu / args.requests * 1e3 for cpu, _ in runs)
    ideal = args.requests / args.concurrency * args.delay
    print(
        f"fake server: {per_request[0]:.3f} ms CPU per request (best of {args.repeats}; median "
        f"{statistics.median(per_request):.3f}) at {args.concurrency} in flight with a {args.delay * 1e3:.0f} ms "
        f"delay; best wall {min(wall for _, wall in runs):.2f}s (delay-bound ideal {ideal:.2f}s)"
    )
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
