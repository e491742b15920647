"""Ctrl-C during a rollout run whose model generates in a worker thread (as an ``hf:`` model does): no new
episode starts, the episodes in flight finish into the store, and the run reports itself interrupted."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from trace_envs.rollout import EpisodeJob, load_episodes, make_jobs, rollout_into_store
from trace_envs.rollout.scripted import OraclePolicy

ENV = "trace/order-cancel-v0"


class ThreadedOracle(OraclePolicy):
    """The oracle's actions, each after a short "generation" in a worker thread. An episode's first action waits
    until ``IN_FLIGHT`` episodes have started (on a loaded machine the second may start late), and the last of
    them sends the process SIGINT (Ctrl-C) from the event loop's thread while every episode in flight is mid-way."""

    spec = "threaded-oracle"
    IN_FLIGHT = 2
    interrupted = threading.Event()
    started: ClassVar[list[int]] = []

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        if not self.interrupted.is_set():
            if id(self) not in self.started:
                self.started.append(id(self))
            while len(self.started) < self.IN_FLIGHT:
                await asyncio.sleep(0.005)
            if not self.interrupted.is_set():
                self.interrupted.set()
                signal.raise_signal(signal.SIGINT)
        await asyncio.to_thread(time.sleep, 0.02)
        return self.act(observation, info)


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Python's own SIGINT handler (a runner started without job control ignores SIGINT; asyncio.run then
    installs none), restored afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    ThreadedOracle.interrupted.clear()
    ThreadedOracle.started.clear()
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_finishes_the_episodes_in_flight_and_starts_no_more(tmp_path: Path) -> None:
    store = tmp_path / "runs.jsonl"
    in_flight: list[int] = []

    def factory(job: EpisodeJob) -> ThreadedOracle:
        return ThreadedOracle()

    result = rollout_into_store(
        store, make_jobs([ENV], range(6)), factory, spec="threaded-oracle", concurrency=2,
        keep_interrupted=True, on_interrupt=in_flight.append,
    )  # fmt: skip
    assert result.interrupted
    assert in_flight == [2]
    episodes = load_episodes(store)
    assert sorted(e.seed for e in episodes) == [0, 1]  # the two in flight, finished; none after them
    assert all(e.success and e.error is None for e in episodes)
    assert result.finished.episodes == 2 and result.missing == 4
