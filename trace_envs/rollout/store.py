"""The trajectory store: one JSON line per episode (:class:`EpisodeRecord`), appended and fsync'd one
episode at a time, so a kill loses at most the episode in flight. A torn last line (a kill during a
write) is detected and cut off before the next append. Reruns skip finished episodes
(:meth:`TrajectoryStore.finished_keys`). Read back with :func:`load_episodes`, :func:`episodes_frame`
(pandas) or :func:`episodes_dataset` (``datasets``).

Format ``trace-envs/episode@1`` (stable; consumers such as the analysis stage rely on it): see
``docs/llm-and-rollout.md``. Fields are only ever added, with defaults.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trace_envs.llm.base import Usage

FORMAT = "trace-envs/episode@1"


class StoreWarning(UserWarning):
    """A damaged line of a JSONL store (trajectories, labels) was skipped or cut off. The message is one line
    naming the file, the line and what was done; the command line prints it as ``warning: …``."""


FsyncMode = Literal["background", "inline", "off"]
EpisodeKey = tuple[str, int, int, str]
"""(env_id, seed, sample, policy): what makes an episode unique in a store."""


class ToolCallRecord(BaseModel):
    """One tool call the agent made and what it returned."""

    step: int = Field(description="Index of the agent turn (0-based) that made the call.")
    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str | None = None
    error: bool = False


class Timings(BaseModel):
    """Where an episode's time went (seconds; ``started_at`` is an ISO-8601 UTC timestamp)."""

    started_at: str = ""
    wall_s: float = 0.0
    policy_s: float = 0.0
    env_s: float = 0.0


class EpisodeRecord(BaseModel):
    """One episode: task, transcript, tool calls, outcome, policy, timings and token usage."""

    model_config = ConfigDict(extra="ignore")

    format: str = FORMAT
    env_id: str
    seed: int
    sample: int = Field(default=0, description="Index of repeated episodes of the same (env, seed, policy).")
    task_id: str | None = None
    capability: str | None = None
    policy: str = Field(description="The policy spec string (scripted name or model spec).")
    model: str | None = Field(default=None, description="Model spec when the policy is model-backed.")
    user_model: str | None = Field(default=None, description="Model spec of the LLM user, if any.")
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    actions: list[str] = Field(default_factory=list, description="The raw action strings sent to env.step.")
    reward: float = 0.0
    success: bool = False
    terminated: bool = False
    truncated: bool = False
    ended: str | None = Field(
        default=None, description="Why it ended: user_stop, agent_stop, max_turns, max_steps, error."
    )
    num_steps: int = 0
    components: dict[str, float] = Field(
        default_factory=dict, description="Evaluator components (e.g. db, communicate)."
    )
    verdict: dict[str, Any] = Field(default_factory=dict, description="The env's full verdict, if it gives one.")
    usage: Usage = Field(default_factory=Usage, description="Tokens and cost of the policy's model calls.")
    user_usage: Usage = Field(default_factory=Usage, description="Tokens and cost of the LLM user's calls.")
    timings: Timings = Field(default_factory=Timings)
    error: str | None = Field(default=None, description="Set when the episode failed (model error, env crash).")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> EpisodeKey:
        return (self.env_id, self.seed, self.sample, self.policy)

    @property
    def finished(self) -> bool:
        """Finished episodes are skipped on resume; failed ones (``error``) are run again."""
        return self.error is None


class TrajectoryStore:
    """A JSONL file of :class:`EpisodeRecord`; safe against kills, resumable, shareable by processes
    (appends hold an exclusive ``flock``). Use it as a context manager (or call :meth:`close`) so the
    last lines are fsync'd."""

    def __init__(self, path: str | Path, *, fsync: FsyncMode | bool = "background", sync_interval_s: float = 0.2):
        self.path = Path(path)
        self.fsync: FsyncMode = "inline" if fsync is True else "off" if fsync is False else fsync
        if self.fsync not in ("background", "inline", "off"):
            raise ValueError(f"fsync must be 'background', 'inline' or 'off', got {fsync!r}")
        if sync_interval_s < 0:
            raise ValueError(f"sync_interval_s must be >= 0 seconds, got {sync_interval_s!r}")
        self.sync_interval_s = sync_interval_s
        self._handle: Any = None
        self._syncer: threading.Thread | None = None
        self._sync_wanted = threading.Condition()
        self._stop_pause = threading.Event()
        self._dirty = False
        self._stopping = False
        self._size = -1

    # ----- writing -------------------------------------------------------------------------------
    def open(self) -> TrajectoryStore:
        """Open for appending, cutting off a torn last line first."""
        if self._handle is None:
            self._open_handle()
            with self._locked():
                self._repair_tail()
            if self.fsync == "background":
                self._stopping = False
                self._stop_pause.clear()
                self._syncer = threading.Thread(target=self._sync_loop, name="trajectory-store-fsync", daemon=True)
                self._syncer.start()
        return self

    def _sync_loop(self) -> None:
        """fsync when lines were written since the last fsync, at most once per ``sync_interval_s``
        (appends in between share the next fsync; an fsync per append would cost the loop more
        than the episode's own bookkeeping)."""
        while True:
            with self._sync_wanted:
                while not self._dirty and not self._stopping:
                    self._sync_wanted.wait()
                if not self._dirty and self._stopping:
                    return
                self._dirty = False
                handle = self._handle
            if handle is not None:
                with contextlib.suppress(OSError, ValueError):
                    os.fsync(handle.fileno())
            self._stop_pause.wait(self.sync_interval_s)

    def _open_handle(self) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "ab")  # noqa: SIM115 - closed in close()

    def close(self) -> None:
        """Stop the background fsync, fsync what is left, close the file."""
        if self._syncer is not None:
            with self._sync_wanted:
                self._stopping = True
                self._sync_wanted.notify()
            self._stop_pause.set()
            self._syncer.join()
            self._syncer = None
        if self._handle is not None:
            if self.fsync != "off":
                self._handle.flush()
                os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None

    def __enter__(self) -> TrajectoryStore:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def append(self, record: EpisodeRecord) -> None:
        """Write one episode as one line. The line is in the OS when this returns (a killed process
        loses nothing already appended); it is fsync'd to disk before returning (``fsync="inline"``)
        or by a background thread within ``sync_interval_s`` (``"background"``, the default, off the
        loop's path)."""
        self.open()
        line = record_line(record)
        with self._locked():
            if os.fstat(self._handle.fileno()).st_size != self._size:  # another writer (or a torn line) since ours
                self._repair_tail()
            self._handle.write(line)
            self._handle.flush()
            self._size = self._handle.tell()
            if self.fsync == "inline":
                os.fsync(self._handle.fileno())
        if self.fsync == "background":
            with self._sync_wanted:
                if not self._dirty:
                    self._dirty = True
                    self._sync_wanted.notify()

    def repair(self) -> int:
        """Cut off a torn last line; returns how many bytes were removed."""
        self._open_handle()
        with self._locked():
            return self._repair_tail()

    def _repair_tail(self) -> int:
        size = self.path.stat().st_size
        if size == 0:
            return 0
        with open(self.path, "rb") as reader:
            reader.seek(size - 1)
            if reader.read(1) == b"\n":
                return 0
            keep, position = 0, size
            while position > 0:
                step = min(65536, position)
                position -= step
                reader.seek(position)
                chunk = reader.read(step)
                newline = chunk.rfind(b"\n")
                if newline >= 0:
                    keep = position + newline + 1
                    break
        self._handle.flush()
        os.truncate(self.path, keep)
        warnings.warn(
            f"{self.path}: removed a torn last line ({size - keep} bytes) left by an interrupted write; its "
            "episode is played again",
            StoreWarning,
            stacklevel=3,
        )
        return size - keep

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)

    # ----- reading -------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[EpisodeRecord]:
        return iter_episodes(self.path)

    def finished_keys(self) -> set[EpisodeKey]:
        """Keys of the episodes already finished (no ``error``)."""
        return finished_keys(self.path)


_UNICODE_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def record_line(record: EpisodeRecord) -> bytes:
    """One JSON line. Unicode line separators (U+0085, U+2028, U+2029) are escaped so that any
    line splitter (``str.splitlines`` included) sees exactly one record per line."""
    text = record.model_dump_json()
    for char, escape in _UNICODE_LINE_BREAKS.items():
        text = text.replace(char, escape)
    return text.encode("utf-8") + b"\n"


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, raw line, is it a torn last line) for every non-empty line, streamed."""
    with open(path, "rb") as reader:
        for number, raw in enumerate(reader, start=1):
            torn = not raw.endswith(b"\n")
            if raw.strip():
                yield number, raw, torn


def iter_episodes(path: str | Path) -> Iterator[EpisodeRecord]:
    """Every parseable record in file order (streamed); a bad line is skipped with a :class:`StoreWarning`
    naming it (a torn last line, left by an interrupted write, as such). A missing file is an error (a
    mistyped path must not read as an empty store)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"trajectory store {file} does not exist; check the path, or write one first with "
            f"`trace-envs rollout … --out {file}` or run_rollouts(..., store=TrajectoryStore({str(file)!r}))"
        )
    for number, raw, torn in _lines(file):
        try:
            yield EpisodeRecord.model_validate_json(raw)
        except ValidationError as exc:
            if torn:
                message = f"skipping a torn last line ({len(raw)} bytes) left by an interrupted write"
            else:
                message = f"skipping a line that is not an episode record ({exc.errors()[0]['msg']})"
            warnings.warn(f"{file}:{number}: {message}", StoreWarning, stacklevel=2)


def finished_keys(path: str | Path) -> set[EpisodeKey]:
    """Keys of the finished episodes (no ``error``) of a store, reading only the key fields."""
    file = Path(path)
    keys: set[EpisodeKey] = set()
    if not file.exists():
        return keys
    for _, raw, torn in _lines(file):
        if torn:
            continue  # cut off before the next append: its episode is not finished
        try:
            data = json.loads(raw)
            if data.get("error") is None:
                keys.add((str(data["env_id"]), int(data["seed"]), int(data.get("sample", 0)), str(data["policy"])))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # torn or foreign lines are not finished episodes
    return keys


def load_episodes(path: str | Path, *, include_failed: bool = False, dedupe: bool = True) -> list[EpisodeRecord]:
    """Records of a store. By default failed episodes (``error`` set) are left out and, where an
    episode key appears twice, the last finished record wins."""
    records = [r for r in iter_episodes(path) if include_failed or r.finished]
    if not dedupe:
        return records
    latest: dict[EpisodeKey, EpisodeRecord] = {}
    for record in records:
        if record.key not in latest or record.finished or not latest[record.key].finished:
            latest[record.key] = record
    return list(latest.values())


def episode_row(record: EpisodeRecord) -> dict[str, Any]:
    """A flat row: scalar columns, plus ``messages``, ``tool_calls``, ``components`` and ``verdict``
    as JSON strings (so every row has the same Arrow schema)."""
    return {
        "env_id": record.env_id,
        "seed": record.seed,
        "sample": record.sample,
        "task_id": record.task_id,
        "capability": record.capability,
        "policy": record.policy,
        "model": record.model,
        "reward": record.reward,
        "success": record.success,
        "terminated": record.terminated,
        "truncated": record.truncated,
        "ended": record.ended,
        "num_steps": record.num_steps,
        "num_tool_calls": len(record.tool_calls),
        "input_tokens": record.usage.input_tokens,
        "output_tokens": record.usage.output_tokens,
        "cost_usd": record.usage.cost_usd + record.user_usage.cost_usd,
        "wall_s": record.timings.wall_s,
        "error": record.error,
        "messages": json.dumps(record.messages, ensure_ascii=False),
        "tool_calls": json.dumps([c.model_dump() for c in record.tool_calls], ensure_ascii=False),
        "components": json.dumps(record.components, sort_keys=True),
        "verdict": json.dumps(record.verdict, sort_keys=True, ensure_ascii=False),
    }


def episodes_frame(path: str | Path, **options: Any) -> Any:
    """The store as a pandas DataFrame (one row per episode, see :func:`episode_row`)."""
    import pandas as pd

    return pd.DataFrame([episode_row(r) for r in load_episodes(path, **options)])


def episodes_dataset(path: str | Path, **options: Any) -> Any:
    """The store as a ``datasets.Dataset`` (one row per episode, see :func:`episode_row`)."""
    from datasets import Dataset

    return Dataset.from_list([episode_row(r) for r in load_episodes(path, **options)])
