"""Labelling: with the dictionary fixed, every trajectory gets one of NA / PRESENT / LACKING per
capability, with a one-line rationale. One request per (run, trajectory) labels every capability;
requests run concurrently (bounded) and each answer is appended to the label store at once, so a
killed job resumes where it stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core.templates import render_template
from trace_envs.llm.base import ChatModel, Usage
from trace_envs.rollout.store import EpisodeRecord

from .label_store import LabelStore
from .models import CapabilityDictionary, CapabilityLabel, Label, TrajectoryLabels
from .parsing import ask_structured
from .trajectories import episode_id, render_trajectory

Progress = Callable[[int, int], None]
"""Called with (labelled so far, total) after each stored row."""


class LabelAnswer(BaseModel):
    """The analyst's labels for one trajectory."""

    labels: list[CapabilityLabel] = Field(min_length=1)


def normalize_answer(data: Any) -> Any:
    """Accept ``{"labels": [...]}``, a bare list, or ``{"name": {"label", "rationale"} | "LABEL"}``."""
    if isinstance(data, list):
        return {"labels": data}
    if isinstance(data, dict) and "labels" not in data:
        rows = []
        for name, value in data.items():
            if isinstance(value, dict):
                rows.append({"capability": name, **value})
            else:
                rows.append({"capability": name, "label": value})
        return {"labels": rows}
    if isinstance(data, dict) and isinstance(data.get("labels"), dict):
        return normalize_answer(data["labels"])
    return data


def check_complete(answer: LabelAnswer, names: Sequence[str]) -> dict[str, CapabilityLabel]:
    """The labels by capability; raises ``ValueError`` naming missing capabilities (unknown ones are dropped)."""
    found = {row.capability: row for row in answer.labels if row.capability in names}
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError(f"no label for capabilities {missing}; give one entry for each of {list(names)}")
    return {name: found[name] for name in names}


def label_messages(
    record: EpisodeRecord, dictionary: CapabilityDictionary, *, run: int, token_budget: int
) -> list[dict[str, Any]]:
    """The labelling request for one trajectory (the outcome is not shown, so labels judge behaviour)."""
    prompt = render_template(
        "prompts/analysis_label.jinja",
        run=run,
        capabilities=dictionary.capabilities,
        trajectory=render_trajectory(record, token_budget=token_budget, show_outcome=False),
    )
    return [{"role": "user", "content": prompt}]


def labels_row(
    record: EpisodeRecord, run: int, labels: dict[str, CapabilityLabel], usage: Usage, analyst: str
) -> TrajectoryLabels:
    return TrajectoryLabels(
        run=run, episode=episode_id(record), success=record.success, labels=labels, usage=usage, analyst=analyst
    )


async def label_one(
    analyst: ChatModel,
    record: EpisodeRecord,
    dictionary: CapabilityDictionary,
    *,
    run: int,
    token_budget: int = 6_000,
    max_repairs: int = 2,
    sampling: dict[str, Any] | None = None,
) -> TrajectoryLabels:
    """Label one trajectory for every capability of ``dictionary``."""
    names = dictionary.names
    answer, usage = await ask_structured(
        analyst,
        label_messages(record, dictionary, run=run, token_budget=token_budget),
        LabelAnswer,
        max_repairs=max_repairs,
        sampling={"max_tokens": 2048, **(sampling or {})},
        normalize=normalize_answer,
        validate=lambda a: check_complete(a, names),
    )
    return labels_row(record, run, check_complete(answer, names), usage, analyst.spec)


def pending_jobs(
    records: Sequence[EpisodeRecord], runs: int, store: LabelStore
) -> tuple[list[tuple[int, EpisodeRecord]], int]:
    """(run, record) pairs not yet in the store, and how many are done already."""
    done = store.load()
    jobs = [(run, r) for run in range(runs) for r in records if (run, episode_id(r)) not in done]
    return jobs, runs * len(records) - len(jobs)


async def label_all(
    analyst: ChatModel,
    records: Sequence[EpisodeRecord],
    dictionary: CapabilityDictionary,
    store: LabelStore,
    *,
    runs: int = 1,
    concurrency: int = 8,
    token_budget: int = 6_000,
    max_repairs: int = 2,
    sampling: dict[str, Any] | None = None,
    on_progress: Progress | None = None,
) -> None:
    """Label every (run, trajectory) missing from ``store``, at most ``concurrency`` requests at once."""
    jobs, done = pending_jobs(records, runs, store)
    total = runs * len(records)
    if on_progress is not None:
        on_progress(done, total)
    queue: asyncio.Queue[tuple[int, EpisodeRecord]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    counter = [done]

    async def worker() -> None:
        while True:
            try:
                run, record = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            row = await label_one(
                analyst,
                record,
                dictionary,
                run=run,
                token_budget=token_budget,
                max_repairs=max_repairs,
                sampling=sampling,
            )
            store.append(row)
            counter[0] += 1
            if on_progress is not None:
                on_progress(counter[0], total)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, len(jobs)))):
                group.create_task(worker())
    except BaseExceptionGroup as failure:
        raise failure.exceptions[0] from None


def label_with_probes(
    records: Sequence[EpisodeRecord],
    dictionary: CapabilityDictionary,
    store: LabelStore,
    *,
    runs: int = 1,
    on_progress: Progress | None = None,
) -> None:
    """Label with the offline probes (no model). Probes are deterministic, so every run gets the
    same labels; capabilities without a probe are NA."""
    from .probes import probe_labels

    jobs, done = pending_jobs(records, runs, store)
    total = runs * len(records)
    cache: dict[str, dict[str, CapabilityLabel]] = {}
    for count, (run, record) in enumerate(jobs, start=done + 1):
        key = episode_id(record)
        if key not in cache:
            probed = probe_labels(record)
            cache[key] = {
                name: probed.get(name) or CapabilityLabel(capability=name, label=Label.NA, rationale="no probe")
                for name in dictionary.names
            }
        store.append(labels_row(record, run, cache[key], Usage(), "probes"))
        if on_progress is not None:
            on_progress(count, total)
