"""Batched local generation for ``hf:`` models, with rows that join a batch already running.

Requests that arrive together are gathered and prefilled together: the prompts are left-padded into one batch,
and each row keeps its own token budget, stop strings, sampling options and random generator, so a row's text
depends on its prompt and options only, not on the rows beside it (up to the floating-point effects of batching,
which ``benchmarks/local_generation.py`` checks under greedy decoding). A row that ends leaves the batch at once
(its key/value cache rows are dropped) and its caller gets its answer; a request that arrives while a batch runs
joins it at the next token (continuous batching, as vLLM does): its prompt is prefilled (with any others that
arrived since the last token), then its cache rows are left-padded to the batch's length and added, and padding
that no row needs any more is dropped. One engine thread runs every model call, one token at a time; callers
only queue their requests and wait. It starts with the first request and ends once idle.

Prefix reuse (:mod:`.hf_prefix`): a prompt that starts like an earlier request computes only the tokens after
that start.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .hf_cache import empty_cache, plain_layers
from .hf_prefix import PrefixStore, prefix_cache, row_states, shared_start

IDLE_SECONDS = 0.5
"""How long the engine thread waits for a request, with nothing running, before it ends (the next starts one)."""


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
    """Generates with ``model`` for many threads at once, at most ``max_batch`` rows at a time.

    ``gather_seconds``: how long the engine, starting a batch (none is running), waits for more requests to arrive
    (only while they keep arriving, at most ten times that), so that episodes whose last answer just ended start
    together. ``prefix_tokens``: how many tokens' key/value states the prefix store keeps (0 turns prefix reuse
    off).
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
        self._lock = threading.Condition()
        """Guards ``_pending`` and ``_engine``; notified when a request arrives."""
        self._engine: threading.Thread | None = None
        """The one thread that runs the model (started by the first request, gone after ``IDLE_SECONDS`` idle)."""
        self._running: _Batch | None = None
        """The batch being decoded (touched by the engine thread only)."""
        self.batch_sizes: Counter[int] = Counter()
        """How many groups of requests of each size were prefilled together (for benchmarks)."""
        self.rows_per_step: Counter[int] = Counter()
        """How many decoding steps ran with each number of rows (for benchmarks)."""

    def generate(
        self, prompt: Sequence[int], sampling: RowSampling, cancelled: threading.Event | None = None
    ) -> Generated:
        """The new tokens for ``prompt`` (blocks; safe from many threads, which are batched together). Raises
        :class:`GenerationCancelled` when ``cancelled`` was set before its batch started; set later, the answer
        ends at the next token."""
        if not prompt:
            raise ValueError("an empty prompt cannot be generated from")
        request = _Pending(list(prompt), sampling, cancelled)
        with self._lock:
            self._pending.append(request)
            if self._engine is None:
                self._engine = threading.Thread(target=self._run_engine, name="hf-generation", daemon=True)
                self._engine.start()
            self._lock.notify()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _run_engine(self) -> None:
        """The engine thread: decode until nothing has run or waited for ``IDLE_SECONDS``, then end. One thread
        runs every model call, so every tensor comes from one allocator arena: when the callers' threads took
        turns, each kept its own arena's peak, and an evaluation's memory grew past 20 GB on a 24 GB machine."""
        try:
            while True:
                with self._lock:
                    if self._running is None and not self._lock.wait_for(lambda: bool(self._pending), IDLE_SECONDS):
                        self._engine = None
                        return
                self._advance()
        except BaseException as exc:  # never leave a caller waiting on a thread that is gone
            with self._lock:
                waiting, self._pending, self._engine = self._pending, [], None
            running = self._running.requests if self._running is not None else []
            self._running = None
            for request in [*running, *waiting]:
                if not request.done.is_set():
                    request.error = exc
                    request.done.set()

    def _advance(self) -> None:
        """One token for the running batch, after letting the waiting requests join it (a new batch when none
        runs). A failing forward pass fails the batch's callers; the next batch still runs."""
        batch = self._running
        joining = self._take(self.max_batch - (len(batch.requests) if batch else 0), gather=batch is None)
        if joining and (batch is None or batch.can_merge):
            batch = self._start(joining, batch)
        elif joining:  # a cache that cannot be padded (a sliding window): they wait for the batch to end
            with self._lock:
                self._pending[:0] = joining
        self._running = batch if batch is not None and batch.requests else None
        if self._running is None:
            return
        self.rows_per_step[len(self._running.requests)] += 1
        try:
            self._running.forward()
            self._running.choose()
        except BaseException as exc:  # every caller in the batch gets the error
            self._running.fail(exc)
        if not self._running.requests:
            self._running = None

    def _take(self, room: int, *, gather: bool) -> list[_Pending]:
        """Up to ``room`` waiting requests (after a short wait while more keep arriving, if ``gather``); every
        waiting request cancelled before it started is answered with :class:`GenerationCancelled` here."""
        waited, seen = 0.0, -1
        while gather and waited < 10 * self.gather_seconds:
            with self._lock:
                count = len(self._pending)
            if count >= room or count == seen:
                break
            seen = count
            time.sleep(self.gather_seconds)
            waited += self.gather_seconds
        waiting: list[_Pending] = []
        cancelled: list[_Pending] = []
        with self._lock:
            for pending in self._pending:
                (cancelled if pending.cancelled is not None and pending.cancelled.is_set() else waiting).append(pending)
            taken, self._pending = waiting[:room], waiting[room:]
        for pending in cancelled:
            pending.error = GenerationCancelled("the request was cancelled before it started")
            pending.done.set()
        return taken

    def _start(self, requests: list[_Pending], running: _Batch | None) -> _Batch | None:
        """Prefill ``requests`` and choose their first tokens; they join ``running`` if there is one. If that
        fails, they get the error and ``running`` goes on as it was."""
        self.batch_sizes[len(requests)] += 1
        settings = DecoderSettings(
            end_ids=self.end_ids, pad_id=self.pad_id, device=self.device, tokenizer=self.tokenizer
        )
        try:
            joined = _Batch(self.model, requests, settings, self.prefixes)
            joined.choose()
            if running is None:
                return joined
            running.merge(joined)
            return running
        except BaseException as exc:
            for request in requests:
                if not request.done.is_set():
                    request.error = exc
                    request.done.set()
            return running


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


class _Batch:
    """Requests being decoded together, one row each (``requests[i]`` is row ``i``): their rows, their key/value
    cache and the logits of their next tokens. Between calls every row has chosen its last token, which
    :meth:`forward` feeds."""

    def __init__(
        self, model: Any, requests: list[_Pending], settings: DecoderSettings, prefixes: PrefixStore | None
    ) -> None:
        """Prefill ``requests``: one left-padded pass over what ``prefixes`` does not already hold."""
        import torch

        self.model, self.settings, self.prefixes = model, settings, prefixes
        self.keyword = cache_keyword(model)
        self.requests = list(requests)
        prompts = [r.prompt for r in requests]
        if prefixes is not None and len(prompts) > 1:
            store_shared_start(model, prompts, prefixes, settings.device)
        reused = [prefixes.longest(p) if prefixes is not None else (None, 0) for p in prompts]
        self.rows = _Rows(
            prompts, [r.sampling for r in requests], settings, [n for _, n in reused], [r.cancelled for r in requests]
        )
        with torch.no_grad():
            cache = prefix_cache(model, reused, settings.device)
            output = model(
                input_ids=self.rows.input_ids,
                attention_mask=self.rows.mask,
                position_ids=self.rows.positions()[:, -self.rows.input_ids.shape[1] :],
                use_cache=True,
                logits_to_keep=1,
                **{self.keyword: cache if cache is not None else empty_cache(model)},
            )
        self.cache, self.logits = output_cache(output), output.logits[:, -1, :]

    @property
    def can_merge(self) -> bool:
        """Whether rows can join: its cache holds only plain per-layer keys and values."""
        return plain_layers(self.cache) is not None

    def choose(self) -> None:
        """Each row's next token; rows that end leave the batch, and their callers get their answers (their
        states go to the prefix store first)."""
        import torch

        rows = self.rows
        keep = rows.advance(self.logits)
        for row in sorted(set(range(len(self.requests))) - set(keep)):
            if self.prefixes is not None:
                states = row_states(self.cache, row, rows.mask[row])
                if states is not None:
                    self.prefixes.add(rows.seen[row][:-1], states)
            request = self.requests[row]
            request.result = Generated(rows.tokens[row], rows.reasons[row])
            request.done.set()
        if len(keep) < len(self.requests):
            if keep:
                self.cache.batch_select_indices(torch.tensor(keep, dtype=torch.long, device=self.settings.device))
            rows.keep(keep)
            self.requests = [self.requests[row] for row in keep]
            self._trim()

    def forward(self) -> None:
        """Feed every row its last token: the logits of the next."""
        import torch

        rows = self.rows
        last = torch.tensor([[tokens[-1]] for tokens in rows.tokens], device=self.settings.device)
        rows.mask = torch.cat([rows.mask, torch.ones_like(last)], dim=-1)
        with torch.no_grad():
            output = self.model(
                input_ids=last,
                attention_mask=rows.mask,
                position_ids=rows.positions()[:, -1:],
                use_cache=True,
                **{self.keyword: self.cache},
            )
        self.cache, self.logits = output_cache(output), output.logits[:, -1, :]

    def merge(self, other: _Batch) -> None:
        """``other``'s rows join this batch (both have chosen their last tokens): both caches and masks are
        left-padded to the longer one. Every new tensor is built before anything changes, so a failure (out of
        memory) leaves this batch as it was."""
        import torch

        if not other.requests:
            return
        ours, theirs = plain_layers(self.cache), plain_layers(other.cache)
        assert ours is not None and theirs is not None, "merge() needs can_merge on both batches"
        width = max(self.rows.mask.shape[1], other.rows.mask.shape[1])
        merged = empty_cache(self.model)
        for index, (layer, joining) in enumerate(zip(ours, theirs, strict=True)):
            keys = torch.cat([left_padded(layer.keys, width), left_padded(joining.keys, width)])
            values = torch.cat([left_padded(layer.values, width), left_padded(joining.values, width)])
            merged.update(keys, values, index)
        mask = torch.cat([left_padded(self.rows.mask, width), left_padded(other.rows.mask, width)])
        self.cache = merged
        self.rows.absorb(other.rows, mask)
        self.requests += other.requests
        self._trim()

    def _trim(self) -> None:
        """Drop the leading positions that are padding in every row (rows that needed them have left), so the
        cache of a batch that runs for many requests does not keep growing."""
        lead = self.rows.trim()
        if lead:
            for layer in self.cache.layers:
                layer.keys, layer.values = layer.keys[:, :, lead:, :], layer.values[:, :, lead:, :]

    def fail(self, error: BaseException) -> None:
        """Every caller still waiting in the batch gets ``error``; the batch is then empty."""
        for request in self.requests:
            if not request.done.is_set():
                request.error = error
                request.done.set()
        self.requests = []
        self.rows.keep([])


def left_padded(tensor: Any, width: int) -> Any:
    """``tensor`` with zeros in front along its position axis (the last for a mask, the third for keys and
    values) up to ``width`` positions."""
    import torch

    axis = 1 if tensor.dim() == 2 else 2
    missing = width - tensor.shape[axis]
    if not missing:
        return tensor
    shape = list(tensor.shape)
    shape[axis] = missing
    return torch.cat([torch.zeros(shape, dtype=tensor.dtype, device=tensor.device), tensor], dim=axis)


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
    """The rows of a batch being decoded, one per request still generating: its sampling, tokens and mask."""

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
        """Prompt and new tokens of each row (what a repetition penalty reads)."""
        self.tokens: list[list[int]] = [[] for _ in prompts]
        self.reasons: list[str] = ["length"] * len(prompts)
        self.generators = [_generator(s, settings.device) for s in samplings]
        self.cancelled = list(cancelled) if cancelled is not None else [None] * len(prompts)

    def positions(self) -> Any:
        """Each token's position in its own request (padding is not counted)."""
        return (self.mask.cumsum(dim=-1) - 1).clamp(min=0)

    def advance(self, logits: Any) -> list[int]:
        """Pick each row's next token; the rows that go on generating."""
        keep: list[int] = []
        for row, sampling in enumerate(self.samplings):
            token = choose_token(logits[row], sampling, self.seen[row], self.generators[row])
            self.tokens[row].append(token)
            self.seen[row].append(token)
            if token in self.settings.end_ids or self._hit_stop(row):
                self.reasons[row] = "stop"
            elif len(self.tokens[row]) < sampling.max_new_tokens and not self._cancelled(row):
                keep.append(row)
        return keep

    def keep(self, rows: list[int]) -> None:
        """Only ``rows`` go on (the others ended)."""
        self.mask = self.mask[rows]
        for name in ("samplings", "seen", "tokens", "reasons", "generators", "cancelled"):
            values = getattr(self, name)
            setattr(self, name, [values[row] for row in rows])

    def absorb(self, other: _Rows, mask: Any) -> None:
        """Take ``other``'s rows after these; ``mask`` is both masks, left-padded to one width."""
        self.mask = mask
        for name in ("samplings", "seen", "tokens", "reasons", "generators", "cancelled"):
            getattr(self, name).extend(getattr(other, name))

    def trim(self) -> int:
        """Drop the leading positions that no row uses; how many were dropped."""
        used = self.mask.any(dim=0).nonzero()
        lead = int(used[0]) if len(used) else 0
        if lead:
            self.mask = self.mask[:, lead:]
        return lead

    def _cancelled(self, row: int) -> bool:
        event = self.cancelled[row]
        return event is not None and event.is_set()

    def _hit_stop(self, row: int) -> bool:
        stops = self.samplings[row].stop
        if not stops:
            return False
        text = str(self.settings.tokenizer.decode(self.tokens[row], skip_special_tokens=True))
        return any(stop in text for stop in stops)


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
