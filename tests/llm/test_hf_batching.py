"""Batched local generation: requests that arrive together are generated as one batch, each with its own budget,
stop strings, sampling options and seed, and each row's text is what it would be alone."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from trace_envs.llm import make_chat_model
from trace_envs.llm.client import SAMPLE_INDEX
from trace_envs.llm.errors import BadRequest
from trace_envs.llm.hf_batching import BatchedGenerator, GenerationCancelled, RowSampling, _Batch, request_seed

pytestmark = pytest.mark.train

PROMPTS = ["Cancel my order please", "What is the status of order #W12?", "hi", "Tell me a long story about boats"]


@pytest.fixture(scope="module")
def loaded(tiny_model_dir: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval(), AutoTokenizer.from_pretrained(tiny_model_dir)


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _together(generator: BatchedGenerator, requests: list[tuple[list[int], RowSampling]]) -> list[list[int]]:
    """The requests submitted from one thread each, all at once (a barrier), as a rollout's episodes do."""
    results: list[list[int]] = [[] for _ in requests]
    barrier = threading.Barrier(len(requests))

    def run(i: int) -> None:
        barrier.wait()
        results[i] = generator.generate(*requests[i]).tokens

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_greedy_alone_is_what_transformers_generate_gives(loaded: tuple[Any, Any]) -> None:
    import torch

    model, tokenizer = loaded
    generator = BatchedGenerator(model, tokenizer, "cpu")
    for text in PROMPTS:
        ids = _ids(tokenizer, text)
        ours = generator.generate(ids, RowSampling(max_new_tokens=12)).tokens
        with torch.no_grad():
            theirs = model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False)[0, len(ids) :].tolist()
        assert ours == theirs


def test_requests_that_arrive_together_are_one_batch_and_each_row_is_what_it_is_alone(
    loaded: tuple[Any, Any],
) -> None:
    model, tokenizer = loaded
    requests = [
        (_ids(tokenizer, PROMPTS[0]), RowSampling(max_new_tokens=5)),
        (_ids(tokenizer, PROMPTS[1]), RowSampling(max_new_tokens=16)),
        (_ids(tokenizer, PROMPTS[2]), RowSampling(max_new_tokens=9, repetition_penalty=1.3)),
        (_ids(tokenizer, PROMPTS[3]), RowSampling(max_new_tokens=16, temperature=0.9, top_p=0.8, top_k=40, seed=11)),
        (_ids(tokenizer, PROMPTS[3]), RowSampling(max_new_tokens=16, temperature=0.9, seed=12)),
    ]
    alone = BatchedGenerator(model, tokenizer, "cpu")
    expected = [alone.generate(*request).tokens for request in requests]
    assert alone.batch_sizes == Counter({1: len(requests)})
    batched = BatchedGenerator(model, tokenizer, "cpu", gather_seconds=0.05)
    assert _together(batched, requests) == expected
    assert max(batched.batch_sizes) > 1 and sum(size * n for size, n in batched.batch_sizes.items()) == len(requests)
    assert [len(t) for t in expected[:3]] <= [5, 16, 9] and expected[3] != expected[4]


def test_a_stop_string_ends_its_row_only(loaded: tuple[Any, Any]) -> None:
    model, tokenizer = loaded
    generator = BatchedGenerator(model, tokenizer, "cpu")
    ids = _ids(tokenizer, PROMPTS[3])
    free = generator.generate(ids, RowSampling(max_new_tokens=16)).tokens
    stop = str(tokenizer.decode(free[2:4]))
    assert stop.strip(), "the tiny model's third and fourth tokens decode to text"
    stopped = generator.generate(ids, RowSampling(max_new_tokens=16, stop=(stop,)))
    assert stopped.stop_reason == "stop" and stop in tokenizer.decode(stopped.tokens)
    assert stopped.tokens == free[: len(stopped.tokens)] and len(stopped.tokens) <= 4


def test_a_failed_batch_fails_its_callers_and_the_next_batch_runs(loaded: tuple[Any, Any]) -> None:
    model, tokenizer = loaded
    generator = BatchedGenerator(model, tokenizer, "cpu")
    with pytest.raises(ValueError, match="empty prompt"):
        generator.generate([], RowSampling(max_new_tokens=3))
    with pytest.raises(IndexError):  # a token the model has no embedding for: its prefill raises
        generator.generate([10**6], RowSampling(max_new_tokens=3))
    assert len(generator.generate(_ids(tokenizer, "hi"), RowSampling(max_new_tokens=3)).tokens) == 3


def test_a_sampled_request_is_seeded_by_its_seed_repeat_and_prompt() -> None:
    assert request_seed(1, 0, [5, 6]) == request_seed(1, 0, [5, 6])
    seeds = {
        request_seed(1, 0, [5, 6]),
        request_seed(2, 0, [5, 6]),
        request_seed(1, 1, [5, 6]),
        request_seed(1, 0, [5]),
    }
    assert len(seeds) == 4


def test_the_hf_client_batches_concurrent_chats_and_replays_a_sampled_one(tiny_model_dir: Path) -> None:
    model = make_chat_model(f"hf:{tiny_model_dir}", device="cpu")
    messages = [[{"role": "user", "content": text}] for text in PROMPTS]
    sampled = {"max_tokens": 8, "temperature": 1.0, "seed": 3}

    async def chats(sample: int) -> list[str]:
        token = SAMPLE_INDEX.set(sample)
        try:
            replies = await asyncio.gather(*(model.achat(m, **sampled) for m in messages))
        finally:
            SAMPLE_INDEX.reset(token)
        return [r.content or "" for r in replies]

    first, again, repeat = asyncio.run(chats(0)), asyncio.run(chats(0)), asyncio.run(chats(1))
    assert first == again and first != repeat
    generator = model.generator  # type: ignore[attr-defined]
    assert max(generator.batch_sizes) > 1
    alone = [model.chat(m, **sampled).content or "" for m in messages]
    assert alone == first


def test_a_prompt_that_starts_like_an_earlier_request_reuses_its_states(loaded: tuple[Any, Any]) -> None:
    model, tokenizer = loaded
    fresh = BatchedGenerator(model, tokenizer, "cpu", prefix_tokens=0)
    reusing = BatchedGenerator(model, tokenizer, "cpu")
    first = _ids(tokenizer, PROMPTS[1])
    answer = reusing.generate(first, RowSampling(max_new_tokens=6)).tokens
    assert reusing.prefixes is not None and reusing.prefixes.reused_tokens == 0
    follow_ups = [first + answer + _ids(tokenizer, " and then?"), first + _ids(tokenizer, " Also #W13.")]
    requests = [(ids, RowSampling(max_new_tokens=8)) for ids in follow_ups]
    expected = [fresh.generate(*request).tokens for request in requests]
    assert _together(reusing, requests) == expected
    assert reusing.prefixes.reused_tokens >= 2 * len(first)


def test_the_prefix_store_keeps_its_token_budget() -> None:
    from trace_envs.llm.hf_prefix import PrefixStore

    store = PrefixStore(max_tokens=10, min_reuse=2)
    store.add([1, 2, 3, 4], [])
    store.add([1, 2, 9, 9, 9], [])
    assert store.longest([1, 2, 3, 4, 5])[1] == 4 and store.longest([1, 2, 9, 8])[1] == 3
    assert store.longest([1, 2])[0] is None  # all but the last token: 1 < min_reuse
    store.add([7, 7, 7, 7], [])  # 13 tokens: the least recently used ([1, 2, 3, 4]) goes
    assert store.longest([1, 2, 3, 4, 5])[1] == 2 and store.longest([7, 7, 7, 1])[1] == 3


def test_a_batch_computes_the_start_its_prompts_share_once(loaded: tuple[Any, Any]) -> None:
    from trace_envs.llm.hf_prefix import shared_start

    model, tokenizer = loaded
    start = _ids(tokenizer, "You are an agent of a small shop. Be brief and check the order first.")
    prompts = [start + _ids(tokenizer, text) for text in (" Cancel #W1.", " Where is #W2?", " hi")]
    assert shared_start(prompts) == len(start) and shared_start([[1, 2], [1, 2, 3]]) == 1
    requests = [(ids, RowSampling(max_new_tokens=6)) for ids in prompts]
    fresh = BatchedGenerator(model, tokenizer, "cpu", prefix_tokens=0)
    expected = [fresh.generate(*request).tokens for request in requests]
    batched = BatchedGenerator(model, tokenizer, "cpu", gather_seconds=0.05)
    assert _together(batched, requests) == expected
    assert batched.batch_sizes == Counter({3: 1})  # one batch, and its rows took the shared start from the store
    assert batched.prefixes is not None and batched.prefixes.reused_tokens == 3 * len(start)


def test_a_dtype_torch_does_not_have_is_a_clear_error(tiny_model_dir: Path) -> None:
    with pytest.raises(BadRequest, match=r"dtype .float12. is not a torch dtype; use e\.g\. float32 or bfloat16"):
        make_chat_model(f"hf:{tiny_model_dir}", device="cpu", dtype="float12")


def test_a_request_that_arrives_while_a_batch_runs_joins_it_and_gets_its_answer_first(
    loaded: tuple[Any, Any],
) -> None:
    """Continuous batching: a short request sent while a long answer is being generated joins that batch at the
    next token (one step decodes both rows) and returns while the long one goes on; both texts are what each
    gives alone."""
    model, tokenizer = loaded
    long_ids, short_ids = _ids(tokenizer, PROMPTS[3]), _ids(tokenizer, PROMPTS[1])
    alone = BatchedGenerator(model, tokenizer, "cpu")
    expected_short = alone.generate(short_ids, RowSampling(max_new_tokens=6)).tokens
    expected_long = alone.generate(long_ids, RowSampling(max_new_tokens=400)).tokens
    generator = BatchedGenerator(model, tokenizer, "cpu")
    stop_long, long_done = threading.Event(), threading.Event()
    answers: dict[str, list[int]] = {}

    def long_request() -> None:
        answers["long"] = generator.generate(long_ids, RowSampling(max_new_tokens=400), stop_long).tokens
        long_done.set()

    thread = threading.Thread(target=long_request)
    thread.start()
    while not generator.rows_per_step and thread.is_alive():  # the long answer is being generated
        threading.Event().wait(0.001)
    answers["short"] = generator.generate(short_ids, RowSampling(max_new_tokens=6)).tokens
    long_was_running = not long_done.is_set()
    stop_long.set()
    thread.join()
    assert long_was_running, "the long answer ended before the short request joined; make it longer"
    assert answers["short"] == expected_short
    assert answers["long"] == expected_long[: len(answers["long"])] and len(answers["long"]) < len(expected_long)
    assert generator.batch_sizes == Counter({1: 2}) and generator.rows_per_step[2] > 0


def test_a_batch_that_runs_for_many_requests_keeps_no_padding_and_no_finished_request(
    loaded: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests keep joining a batch that never empties: its cache is as wide as its longest row needs (the
    padding of rows that left is dropped), it holds only the rows still generating, and every answer is what
    the request gives alone. A request cancelled while it waits for room is answered at once."""
    model, tokenizer = loaded
    prompts = [_ids(tokenizer, text) for text in PROMPTS * 3]
    alone = BatchedGenerator(model, tokenizer, "cpu", prefix_tokens=0)
    expected = [alone.generate(ids, RowSampling(max_new_tokens=4 + 3 * i)).tokens for i, ids in enumerate(prompts)]
    generator = BatchedGenerator(model, tokenizer, "cpu", max_batch=2, prefix_tokens=0)
    widths: list[tuple[int, int]] = []  # (cache positions, longest row's positions) after every token
    forward = _Batch.forward

    def watched(batch: _Batch) -> None:
        forward(batch)
        longest = int(batch.rows.mask.sum(dim=1).max())
        widths.append((batch.cache.layers[0].keys.shape[2], longest))
        assert len(batch.requests) == len(batch.rows.tokens) == batch.cache.layers[0].keys.shape[0] <= 2

    monkeypatch.setattr(_Batch, "forward", watched)
    stop = threading.Event()
    stop.set()
    cancelled: dict[str, BaseException] = {}

    def cancelled_request() -> None:
        try:
            generator.generate(prompts[0], RowSampling(max_new_tokens=3), stop)
        except GenerationCancelled as exc:
            cancelled["error"] = exc

    waiter = threading.Thread(target=cancelled_request)
    requests = [(ids, RowSampling(max_new_tokens=4 + 3 * i)) for i, ids in enumerate(prompts)]
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, generator.generate(*requests[i]).tokens))
        for i in range(len(requests))
    ]
    results: dict[int, list[int]] = {}
    for thread in threads:
        thread.start()
    waiter.start()
    for thread in [*threads, waiter]:
        thread.join()
    assert [results[i] for i in range(len(prompts))] == expected
    assert isinstance(cancelled.get("error"), GenerationCancelled)
    assert max(generator.rows_per_step) == 2 and sum(generator.rows_per_step.values()) == len(widths)
    assert all(cache == longest for cache, longest in widths), widths  # no column that every row pads


def test_one_engine_thread_runs_every_model_call_and_ends_when_idle(
    loaded: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Callers only queue: every forward pass of many concurrent requests runs on one thread that is none of
    theirs (so every tensor comes from one allocator arena), and that thread is gone once nothing is asked."""
    from trace_envs.llm import hf_batching

    model, tokenizer = loaded
    monkeypatch.setattr(hf_batching, "IDLE_SECONDS", 0.05)
    threads: set[int] = set()
    hook = model.register_forward_pre_hook(lambda *_: threads.add(threading.get_ident()))
    generator = BatchedGenerator(model, tokenizer, "cpu", gather_seconds=0.01)
    callers: set[int] = set()

    def ask(i: int) -> list[int]:
        callers.add(threading.get_ident())
        return generator.generate(_ids(tokenizer, PROMPTS[i % 4]), RowSampling(max_new_tokens=3 + i)).tokens

    try:
        requests = [(_ids(tokenizer, PROMPTS[i % 4]), RowSampling(max_new_tokens=3 + i)) for i in range(6)]
        _together(generator, requests)
        engine = generator._engine
        ask(0)
    finally:
        hook.remove()
    assert len(threads) == 1 and not threads & callers and engine is not None
    engine.join(timeout=5)
    assert not engine.is_alive() and generator._engine is None


def test_an_engine_that_fails_answers_every_caller_and_the_next_request_starts_a_new_one(
    loaded: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, tokenizer = loaded
    generator = BatchedGenerator(model, tokenizer, "cpu")
    ids = _ids(tokenizer, PROMPTS[0])
    expected = generator.generate(ids, RowSampling(max_new_tokens=4)).tokens
    advance = BatchedGenerator._advance

    def broken(self: BatchedGenerator) -> None:
        monkeypatch.setattr(BatchedGenerator, "_advance", advance)  # only once
        raise MemoryError("no room for the batch")

    monkeypatch.setattr(BatchedGenerator, "_advance", broken)
    with pytest.raises(MemoryError, match="no room"):
        generator.generate(ids, RowSampling(max_new_tokens=4))
    assert generator.generate(ids, RowSampling(max_new_tokens=4)).tokens == expected
