"""Labelling through the Anthropic Message Batches API (half price, for large stores): one batch
request per pending (run, trajectory), polled until it ends; each answer is parsed (with live repair
requests when invalid) and appended to the label store. The batch id is saved beside the labels, so
a killed job picks the same batch up again instead of paying for a second one."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trace_envs.llm.base import ChatModel, Usage
from trace_envs.rollout.store import EpisodeRecord

from .label_store import LabelStore
from .labelling import LabelAnswer, Progress, check_complete, label_messages, label_one, labels_row, pending_jobs
from .models import CapabilityDictionary
from .parsing import repair_loop

BATCH_DISCOUNT = 0.5
"""Message Batches cost half the price of live requests."""


class BatchState(BaseModel):
    """What is in flight: the batch id and which (run, episode) each custom id stands for."""

    batch_id: str
    requests: dict[str, tuple[int, str]]


def custom_id(run: int, episode: str) -> str:
    """A batch custom id (``[a-zA-Z0-9_-]{1,64}``) for one (run, episode)."""
    return f"r{run}-{episode}"


def _require_anthropic(analyst: ChatModel) -> Any:
    from trace_envs.llm.anthropic_client import AnthropicChatModel

    if not isinstance(analyst, AnthropicChatModel):
        raise ValueError(
            f"batch labelling needs an anthropic:<model> analyst, got {analyst.spec!r}; drop --batch for other models"
        )
    return analyst


async def _submit(
    model: Any,
    jobs: Sequence[tuple[int, EpisodeRecord]],
    dictionary: CapabilityDictionary,
    token_budget: int,
    sampling: dict[str, Any],
    state_path: Path,
) -> BatchState:
    """Send one Message Batch with a labelling request per (run, trajectory) and save its id and requests
    to ``state_path`` first thing, so that a killed run polls the same batch instead of paying twice."""
    requests = []
    mapping: dict[str, tuple[int, str]] = {}
    for run, record in jobs:
        cid = custom_id(run, _id(record))
        messages = label_messages(record, dictionary, run=run, token_budget=token_budget)
        requests.append({"custom_id": cid, "params": model._params(messages, None, sampling)})
        mapping[cid] = (run, _id(record))
    batch = await asyncio.to_thread(model._client.messages.batches.create, requests=requests)
    state = BatchState(batch_id=batch.id, requests=mapping)
    state_path.parent.mkdir(parents=True, exist_ok=True)
    state_path.write_text(state.model_dump_json())
    return state


async def _results(model: Any, batch_id: str, poll_s: float) -> list[Any]:
    """The batch's results, once it has ended (polled every ``poll_s`` seconds)."""
    while True:
        batch = await asyncio.to_thread(model._client.messages.batches.retrieve, batch_id)
        if batch.processing_status == "ended":
            break
        await asyncio.sleep(poll_s)
    return await asyncio.to_thread(lambda: list(model._client.messages.batches.results(batch_id)))


async def label_with_batches(
    analyst: ChatModel,
    records: Sequence[EpisodeRecord],
    dictionary: CapabilityDictionary,
    store: LabelStore,
    state_path: Path,
    *,
    runs: int = 1,
    token_budget: int = 6_000,
    max_repairs: int = 2,
    sampling: dict[str, Any] | None = None,
    poll_s: float = 30.0,
    on_progress: Progress | None = None,
) -> None:
    """Label every (run, trajectory) missing from ``store`` with one Message Batch."""
    model = _require_anthropic(analyst)
    jobs, done = pending_jobs(records, runs, store)
    total = runs * len(records)
    if on_progress is not None:
        on_progress(done, total)
    if not jobs:
        state_path.unlink(missing_ok=True)
        return
    by_episode = {(run, _id(record)): record for run, record in jobs}
    params_sampling = {"max_tokens": 2048, **(sampling or {})}
    state = _load_state(state_path)
    if state is None or not set(state.requests.values()) >= set(by_episode):
        state = await _submit(model, jobs, dictionary, token_budget, params_sampling, state_path)
    results = await _results(model, state.batch_id, poll_s)
    from trace_envs.llm.anthropic_client import from_anthropic

    names = dictionary.names
    count = done
    for item in results:
        key = state.requests.get(item.custom_id)
        if key is None or key not in by_episode:
            continue
        run, _ = key
        record = by_episode.pop(key)
        if item.result.type == "succeeded":
            first = from_anthropic(item.result.message)
            first = first.model_copy(update={"usage": _discounted(model, first.usage)})
            answer, usage = await repair_loop(
                lambda conversation: analyst.achat(conversation, **params_sampling),
                label_messages(record, dictionary, run=run, token_budget=token_budget),
                LabelAnswer,
                max_repairs=max_repairs,
                normalize=_normalize,
                validate=lambda a: check_complete(a, names),
                first=first,
            )
            store.append(labels_row(record, run, check_complete(answer, names), usage, analyst.spec))
        else:  # errored / expired / canceled: label it live instead
            row = await label_one(
                analyst, record, dictionary, run=run, token_budget=token_budget, max_repairs=max_repairs,
                sampling=sampling,
            )  # fmt: skip
            store.append(row)
        count += 1
        if on_progress is not None:
            on_progress(count, total)
    for (run, _), record in by_episode.items():  # requests the batch did not answer
        store.append(
            await label_one(analyst, record, dictionary, run=run, token_budget=token_budget, max_repairs=max_repairs)
        )
        count += 1
        if on_progress is not None:
            on_progress(count, total)
    state_path.unlink(missing_ok=True)


def _id(record: EpisodeRecord) -> str:
    from .trajectories import episode_id

    return episode_id(record)


def _normalize(data: Any) -> Any:
    from .labelling import normalize_answer

    return normalize_answer(data)


def _discounted(model: Any, usage: Usage) -> Usage:
    price = getattr(model, "price", None)
    if price is None:
        return usage
    return usage.model_copy(update={"cost_usd": price.cost(usage) * BATCH_DISCOUNT})


def _load_state(path: Path) -> BatchState | None:
    if not path.exists():
        return None
    try:
        return BatchState.model_validate_json(path.read_text())
    except ValueError:
        return None
