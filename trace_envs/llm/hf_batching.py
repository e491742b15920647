"""Batched local generation for ``hf:`` models.

Requests that arrive while a batch is generating are gathered and generated together: the prompts are
left-padded into one batch, and each row keeps its own token budget, stop strings, sampling options and
random generator, so a row's text depends on its prompt and options only, not on the rows beside it (up to
the floating-point effects of batching, which ``benchmarks/local_generation.py`` checks under greedy
decoding). A row that ends leaves the batch (its key/value cache rows are dropped). No background thread:
the first waiting caller generates the next batch for everyone waiting (``BatchedGenerator.generate``).

Prefix reuse (:mod:`.hf_prefix`): a prompt that starts like an earlier request computes only the tokens after
that start.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .hf_prefix import PrefixStore, prefix_cache, row_states, shared_start


@dataclass(frozen=True)
class RowSampling:
    """How one request is decoded: greedy when ``temperature`` is 0, else sampled with ``seed``."""

    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    repetition_penalty: float | None = None
    stop: tuple[str, ...] = ()
    seed: int = 0


@dataclass(frozen=True)
class Generated:
    """The new tokens of one request and why it ended: ``"stop"`` (an end token or a stop string) or ``"length"``."""

    tokens: list[int]
    stop_reason: str


def request_seed(seed: int, sample: int, prompt_ids: Sequence[int]) -> int:
    """A sampled request's own seed, from the caller's ``seed``, the repeat ``sample`` and the prompt itself: the
    same request draws the same tokens in any process, batch or arrival order, and two prompts never share a
    random stream."""
    digest = hashlib.sha256(f"{seed}:{sample}:{','.join(map(str, prompt_ids))}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


class GenerationCancelled(Exception):
    """The request's caller cancelled it before its batch started."""


@dataclass
class _Pending:
    prompt: list[int]
    sampling: RowSampling
    cancelled: threading.Event | None = None
    """Set by a caller that no longer waits (a second Ctrl-C): the request never starts, or its row ends at the
    next token."""
    done: threading.Event = field(default_factory=threading.Event)
    result: Generated | None = None
    error: BaseException | None = None


class BatchedGenerator:
    """Generates with ``model`` for many threads at once, in batches of at most ``max_batch`` requests.

    ``gather_seconds``: how long the caller that runs the next batch waits for more requests to arrive (only
    while they keep arriving, at most ten times that), so that episodes whose last batch just ended join the
    next one instead of running alone. ``prefix_tokens``: how many tokens' key/value states the prefix store
    keeps (0 turns prefix reuse off).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        device: str,
        *,
        max_batch: int = 16,
        gather_seconds: float = 0.002,
        prefix_tokens: int = 32_768,
    ):
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.prefixes = PrefixStore(prefix_tokens) if prefix_tokens > 0 else None
        """Earlier requests' key/value states, reused for prompts that start alike (``prefix_tokens=0``: none)."""
        self.max_batch = max_batch
        self.gather_seconds = gather_seconds
        self.end_ids = end_token_ids(model, tokenizer)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(self.end_ids))
        self._pending: list[_Pending] = []
        self._pending_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self.batch_sizes: list[int] = []
        """The size of every batch generated so far (for benchmarks)."""

    def generate(
        self, prompt: Sequence[int], sampling: RowSampling, cancelled: threading.Event | None = None
    ) -> Generated:
        """The new tokens for ``prompt`` (blocks; safe from many threads, which are batched together). Raises
        :class:`GenerationCancelled` when ``cancelled`` was set before its batch started; set later, the answer
        ends at the next token."""
        request = _Pending(list(prompt), sampling, cancelled)
        with self._pending_lock:
            self._pending.append(request)
        while not request.done.is_set():
            with self._generate_lock:
                if request.done.is_set():
                    break
                self._run(self._gather())
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _gather(self) -> list[_Pending]:
        """The next batch: what is waiting, after a short wait while more requests keep arriving."""
        waited, seen = 0.0, -1
        while waited < 10 * self.gather_seconds:
            with self._pending_lock:
                count = len(self._pending)
            if count >= self.max_batch or count == seen:
                break
            seen = count
            time.sleep(self.gather_seconds)
            waited += self.gather_seconds
        with self._pending_lock:
            batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
        return batch

    def _run(self, batch: list[_Pending]) -> None:
        for request in [r for r in batch if r.cancelled is not None and r.cancelled.is_set()]:
            request.error = GenerationCancelled("the request was cancelled before it started")
            request.done.set()
            batch.remove(request)
        if not batch:
            return
        self.batch_sizes.append(len(batch))
        try:
            results = decode_batch(
                self.model,
                [r.prompt for r in batch],
                [r.sampling for r in batch],
                self._decoder_settings(),
                self.prefixes,
                [r.cancelled for r in batch],
            )
        except BaseException as exc:  # every waiting caller gets the error, and the next batch still runs
            for request in batch:
                request.error = exc
                request.done.set()
            return
        for request, result in zip(batch, results, strict=True):
            request.result = result
            request.done.set()

    def _decoder_settings(self) -> DecoderSettings:
        return DecoderSettings(end_ids=self.end_ids, pad_id=self.pad_id, device=self.device, tokenizer=self.tokenizer)


def end_token_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """The tokens that end an answer: the generation config's end-of-sequence ids and the tokenizer's."""
    ids: set[int] = set()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    if not ids:
        raise ValueError("the model and tokenizer name no end-of-sequence token")
    return frozenset(ids)


@dataclass(frozen=True)
class DecoderSettings:
    """What every row of a batch shares: the end tokens, the padding token, the device, the tokenizer (stop strings)."""

    end_ids: frozenset[int]
    pad_id: int
    device: str
    tokenizer: Any


def decode_batch(
    model: Any,
    prompts: Sequence[Sequence[int]],
    samplings: Sequence[RowSampling],
    settings: DecoderSettings,
    prefixes: PrefixStore | None = None,
    cancelled: Sequence[threading.Event | None] | None = None,
) -> list[Generated]:
    """Generate for every prompt at once: one left-padded prefill of what ``prefixes`` does not already hold,
    then one token per live row a step. Every request's states go into ``prefixes`` when it ends; a row whose
    ``cancelled`` event is set ends at its next token."""
    import torch

    keyword = cache_keyword(model)
    if prefixes is not None and len(prompts) > 1:
        store_shared_start(model, prompts, prefixes, settings.device)
    reused = [prefixes.longest(p) if prefixes is not None else (None, 0) for p in prompts]
    with torch.no_grad():
        rows = _Rows(prompts, samplings, settings, [length for _, length in reused], cancelled)
        cache = prefix_cache(model, reused, settings.device)
        extra = {keyword: cache} if cache is not None else {}
        output = model(
            input_ids=rows.input_ids,
            attention_mask=rows.mask,
            position_ids=rows.positions()[:, -rows.input_ids.shape[1] :],
            use_cache=True,
            logits_to_keep=1,
            **extra,
        )
        while True:
            cache = output_cache(output)
            keep = rows.advance(output.logits[:, -1, :])
            if prefixes is not None:
                for row in sorted(set(range(len(rows.live))) - set(keep)):
                    index = rows.live[row]
                    states = row_states(cache, row, rows.mask[row])
                    if states is not None:
                        prefixes.add(rows.seen[index][:-1], states)
            if not keep:
                break
            if len(keep) < len(rows.live):
                cache.batch_select_indices(torch.tensor(keep, device=settings.device))
                rows.keep(keep)
            last = torch.tensor([[rows.tokens[i][-1]] for i in rows.live], device=settings.device)
            rows.mask = torch.cat([rows.mask, torch.ones_like(last)], dim=-1)
            output = model(
                input_ids=last,
                attention_mask=rows.mask,
                position_ids=rows.positions()[:, -1:],
                use_cache=True,
                **{keyword: cache},
            )
    return rows.results()


def store_shared_start(model: Any, prompts: Sequence[Sequence[int]], prefixes: PrefixStore, device: str) -> None:
    """Compute once the start every prompt of a batch shares, when the store holds less of it: the first batch of
    a rollout (16 episodes opening with one system prompt and tools) would otherwise compute it in every row."""
    import torch

    length = shared_start(prompts)
    if length < prefixes.min_reuse or prefixes.best(prompts[0][: length + 1])[1] >= length:
        return
    with torch.no_grad():
        ids = torch.tensor([list(prompts[0][:length])], dtype=torch.long, device=device)
        output = model(input_ids=ids, use_cache=True, logits_to_keep=1)
    states = row_states(output_cache(output), 0, torch.ones(length, dtype=torch.long, device=device))
    if states is not None:
        prefixes.add(prompts[0][:length], states)


def cache_keyword(model: Any) -> str:
    """The name the model's ``forward`` takes its key/value cache by: ``cache`` (transformers 5.25 on) or
    ``past_key_values`` (before); a PEFT model is asked about the model it wraps."""
    import inspect

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"


def output_cache(output: Any) -> Any:
    """The key/value cache a forward pass returned, under either name."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


class _Rows:
    """The state of a batch being decoded: which requests are still generating, and each one's tokens."""

    def __init__(
        self,
        prompts: Sequence[Sequence[int]],
        samplings: Sequence[RowSampling],
        settings: DecoderSettings,
        reused: Sequence[int],
        cancelled: Sequence[threading.Event | None] | None = None,
    ):
        """``reused[i]``: how many of prompt ``i``'s first tokens come from the prefix store (their states are
        in the cache, left-padded to the longest); the rest is left-padded into ``input_ids``."""
        import torch

        self.samplings, self.settings = list(samplings), settings
        if any(not prompt for prompt in prompts):
            raise ValueError("an empty prompt cannot be generated from")
        cached, width = max(reused), max(len(p) - r for p, r in zip(prompts, reused, strict=True))
        self.input_ids = torch.full((len(prompts), width), settings.pad_id, dtype=torch.long)
        self.mask = torch.zeros((len(prompts), cached + width), dtype=torch.long)
        for row, (prompt, start) in enumerate(zip(prompts, reused, strict=True)):
            rest = list(prompt[start:])
            self.input_ids[row, width - len(rest) :] = torch.tensor(rest, dtype=torch.long)
            self.mask[row, cached - start : cached] = 1
            self.mask[row, cached + width - len(rest) :] = 1
        self.input_ids, self.mask = self.input_ids.to(settings.device), self.mask.to(settings.device)
        self.seen = [list(p) for p in prompts]
        """Prompt and new tokens of each request (what a repetition penalty reads)."""
        self.tokens: list[list[int]] = [[] for _ in prompts]
        self.reasons: list[str] = ["length"] * len(prompts)
        self.live = list(range(len(prompts)))
        """The requests still generating, in the order of the batch's rows."""
        self.generators = [_generator(s, settings.device) for s in samplings]
        self.cancelled = list(cancelled) if cancelled is not None else [None] * len(prompts)

    def positions(self) -> Any:
        """Each token's position in its own request (padding is not counted)."""
        return (self.mask.cumsum(dim=-1) - 1).clamp(min=0)

    def advance(self, logits: Any) -> list[int]:
        """Pick each live row's next token; the rows (indices into ``live``) that go on generating."""
        keep: list[int] = []
        for row, index in enumerate(self.live):
            sampling = self.samplings[index]
            token = choose_token(logits[row], sampling, self.seen[index], self.generators[index])
            self.tokens[index].append(token)
            self.seen[index].append(token)
            if token in self.settings.end_ids or self._hit_stop(index):
                self.reasons[index] = "stop"
            elif len(self.tokens[index]) < sampling.max_new_tokens and not self._cancelled(index):
                keep.append(row)
        return keep

    def keep(self, rows: list[int]) -> None:
        """Only ``rows`` of the batch go on (the others ended)."""
        self.mask = self.mask[rows]
        self.live = [self.live[row] for row in rows]

    def _cancelled(self, index: int) -> bool:
        event = self.cancelled[index]
        return event is not None and event.is_set()

    def _hit_stop(self, index: int) -> bool:
        stops = self.samplings[index].stop
        if not stops:
            return False
        text = str(self.settings.tokenizer.decode(self.tokens[index], skip_special_tokens=True))
        return any(stop in text for stop in stops)

    def results(self) -> list[Generated]:
        return [Generated(tokens, reason) for tokens, reason in zip(self.tokens, self.reasons, strict=True)]


def _generator(sampling: RowSampling, device: str) -> Any:
    import torch

    if sampling.temperature <= 0:
        return None
    return torch.Generator(device=device).manual_seed(sampling.seed)


def choose_token(logits: Any, sampling: RowSampling, seen: Sequence[int], generator: Any) -> int:
    """The next token from one row's logits, processed as ``transformers``' ``generate`` does, in its order:
    repetition penalty, then (sampling only) temperature, top-k and top-p."""
    import torch

    scores = logits.float()
    if sampling.repetition_penalty is not None and sampling.repetition_penalty != 1.0:
        scores = scores.clone()
        index = torch.tensor(sorted(set(seen)), device=scores.device)
        values = scores[index]
        penalty = sampling.repetition_penalty
        scores[index] = torch.where(values < 0, values * penalty, values / penalty)
    if sampling.temperature <= 0:
        return int(torch.argmax(scores))
    scores = scores / sampling.temperature
    if 0 < sampling.top_k < scores.shape[-1]:
        kth = torch.topk(scores, sampling.top_k).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if sampling.top_p < 1.0:
        ordered, order = torch.sort(scores, descending=True)
        probabilities = torch.softmax(ordered, dim=-1)
        outside = probabilities.cumsum(dim=-1) - probabilities > sampling.top_p
        scores = scores.masked_fill(torch.zeros_like(outside).scatter(0, order, outside), float("-inf"))
    probabilities = torch.softmax(scores, dim=-1)
    return int(torch.multinomial(probabilities, 1, generator=generator))
