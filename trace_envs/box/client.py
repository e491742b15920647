"""One box process seen from the trusted side: start it, make calls with a deadline, kill it.

A reset or step of an episode whose user the parent's model plays may ask for the user's lines first
(:class:`~trace_envs.box.protocol.UserTurn`): the call's ``user`` answers each (a box that asks during any
other call, or more than ``limits.user_turns_per_call`` times, or with a line over
:data:`MAX_USER_TURN_BYTES`, broke the protocol), and the time it takes is added to the call's deadline.
A call that does not answer in time kills the box (:class:`BoxTimeout`): the start has
``limits.wall_seconds``, every other call ``limits.step_seconds``, and all the calls of one episode (from its
reset on) ``limits.episode_seconds`` together. A box that dies, writes something that is not a reply of the
protocol, or a reply over ``limits.reply_bytes`` (read no further), is killed too (:class:`BoxCrashed`,
:class:`BoxProtocolError`). An exception of the env's own code comes back as :class:`BoxedEnvError`. Both
kinds of error pickle (a vector env's worker sends them to its parent). Nothing here waits without a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from .audit import MAX_REPORTED
from .launch import box_environment, boxed_command, denied_read_roots, fresh_hash_seed, kill_strays, scratch_parent
from .layers import missing_layers, refusal
from .limits import BoxLimits
from .lines import LineReader, LineTooLong, PipeClosed, PipeTimeout, wait_for
from .outputs import STREAMS, OutputTails
from .protocol import (
    REPLY,
    REPLY_TO,
    Ask,
    Close,
    Failed,
    Ready,
    Refusal,
    Reset,
    ResetReply,
    Start,
    Step,
    UserLine,
    UserTurn,
    _Message,
)

SERVER_MODULE = "trace_envs.box.server"
MAX_USER_TURN_BYTES = 1024 * 1024
REPORT_LIMIT = 1024 * 1024
"""Bytes of a box's report pipe taken into lines at most (the rest is read and dropped)."""
MAX_REPORT_LINE = 8192
"""Bytes of one report line at most (the hook cuts a refusal's detail to 500 characters); a longer one is dropped."""
MAX_SIGNALS = 8
"""Signal reports kept per box (the box has two soft-limit signals to report)."""
SIGNAL_NAMES = frozenset(member.name for member in signal.Signals)
SEALED = "sealed"
"""The report that ends the box's claims of isolation: sent before it reads the module's text (see server.main)."""
TAIL = 2000
ERROR_BOUNDS = {"error": 200, "message": 2000, "traceback": 3000}
"""Characters of a :class:`Failed` reply's fields kept (the box cuts them too; the parent trusts no length): the
start of the error's name and message, the end of the traceback."""


class BoxFailure(RuntimeError):
    """The box itself failed (not the env's code): it hung, died or broke the protocol; it has been killed."""

    reason = "failed"

    def __init__(self, message: str, *, stage: str, signal_name: str | None = None):
        super().__init__(message)
        self.stage = stage
        self.signal_name = signal_name

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its class, message, stage and signal (its arguments are keyword-only)."""
        return rebuilt_failure, (type(self), str(self), self.stage, self.signal_name)


def rebuilt_failure(cls: type[BoxFailure], message: str, stage: str, signal_name: str | None) -> BoxFailure:
    """A :class:`BoxFailure` as pickled (see its ``__reduce__``)."""
    return cls(message, stage=stage, signal_name=signal_name)


class BoxTimeout(BoxFailure):
    reason = "timeout"


class BoxCrashed(BoxFailure):
    reason = "crashed"


class BoxProtocolError(BoxFailure):
    reason = "protocol"


class BoxLayerMissing(BoxFailure):
    """This host lacks a kernel layer every box needs, and the limits do not allow a weaker box: none started."""

    reason = "layers"


class BoxedEnvError(RuntimeError):
    """The env's code raised inside the box; ``error`` is the exception's type name, ``line`` the module's line."""

    def __init__(self, failed: Failed, stage: str):
        failed = bounded_failure(failed)
        super().__init__(f"{failed.error}: {failed.message}")
        self.failed = failed
        self.error = failed.error
        self.line = failed.line
        self.stage = stage
        self.traceback = failed.traceback

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the box's reply and the stage (the default would call it with the message alone)."""
        return type(self), (self.failed, self.stage)


def bounded_lines(stream: Any, max_bytes: int) -> Iterator[bytes]:
    """The lines of ``stream`` (a binary file read to its end), without their newline; a line over
    ``max_bytes`` is dropped whole, and never held past that length."""
    buffer, dropping = b"", False
    while chunk := stream.read(65536):
        *lines, buffer = (buffer + chunk).split(b"\n")
        for line in lines:
            if not dropping and len(line) <= max_bytes:
                yield line
            dropping = False
        if len(buffer) > max_bytes:
            buffer, dropping = b"", True


def bounded_failure(failed: Failed) -> Failed:
    """``failed`` with each text field cut to :data:`ERROR_BOUNDS` (an error name also to one printable line):
    what the box says lands in episode records and reports, so no field of it is taken at the box's length."""
    error = "".join(c if c.isprintable() else "?" for c in failed.error[: ERROR_BOUNDS["error"]])
    message = failed.message[: ERROR_BOUNDS["message"]]
    traceback = failed.traceback[-ERROR_BOUNDS["traceback"] :]
    return failed.model_copy(update={"error": error, "message": message, "traceback": traceback})


@dataclass(frozen=True)
class BoxRecord:
    """What is kept of a box once it is gone: a few small fields (never its declaration, replies or buffers),
    read the way a live :class:`BoxProcess` is (``alive``, ``failure``, ``sealed``, the output tails)."""

    run_id: str
    pid: int
    isolation: tuple[str, ...]
    sealed: tuple[str, ...]
    failure: BoxFailure | None
    outputs: dict[str, str]
    alive: bool = False

    def stdout_tail(self) -> str:
        return self.outputs.get("stdout", "")

    def stderr_tail(self) -> str:
        return self.outputs.get("stderr", "")


class BoxProcess:
    """A started box serving one env of ``source`` (built with ``options``)."""

    def __init__(
        self,
        source: str,
        options: dict[str, Any] | None = None,
        limits: BoxLimits | None = None,
        *,
        refusals: list[Refusal] | None = None,
        started: list[BoxProcess | BoxRecord] | None = None,
    ):
        self.limits = limits or BoxLimits()
        missing = missing_layers(namespaces=self.limits.namespaces)
        if missing and not self.limits.weaker_box:  # fail closed: no box, and no folder left behind
            raise BoxLayerMissing(refusal(missing), stage="start")
        self.scratch = tempfile.mkdtemp(prefix="trace-box-", dir=scratch_parent())
        self.run_id = Path(self.scratch).name
        self.refusals: list[Refusal] = refusals if refusals is not None else []
        """What the audit hook refused (a list the caller may share between boxes)."""
        self.signals: list[str] = []
        self.sealed: list[str] = []
        """The layers the box said were in force, before its :data:`SEALED` report (claims after it are ignored)."""
        self.resets = 0
        self.episode_seconds = 0.0
        """The box's time in the episode under way (its reset and every call since), against its limit."""
        self._limit = f"{self.limits.wall_seconds:g} s (BoxLimits.wall_seconds)"
        self._user_seconds = 0.0
        """The deadline of the call under way, in words (for a timeout's message)."""
        self.failure: BoxFailure | None = None
        self.owner = os.getpid()
        """The process that started it: only that one talks to it or ends it (a forked child just lets go)."""
        self._claims_closed = False
        """Set by the box's :data:`SEALED` report: no claim of isolation is believed after it."""
        self._refusals_kept = 0
        self.outputs: dict[str, str] = {}
        """The ends of its stdout and stderr, once it is gone."""
        start = time.perf_counter()
        self._spawn()
        if started is not None:
            started.append(self)  # before the module runs: a box that fails to start is still known
        try:
            reply = self.call(Start(source=source, options=options or {}), stage="import")
        except BaseException:
            self.kill()
            raise
        self.ready: Ready = reply
        self.start_seconds = time.perf_counter() - start

    def _spawn(self) -> None:
        request_read, self._requests = os.pipe()
        os.set_blocking(self._requests, False)
        self._replies, reply_write = os.pipe()
        self._reply_lines = LineReader(self._replies, self.limits.spin_seconds, self.limits.reply_bytes)
        report_read, report_write = os.pipe()
        server = [sys.executable, "-B", "-m", SERVER_MODULE, str(request_read), str(reply_write), str(report_write)]
        server += [self.limits.model_dump_json(), json.dumps(denied_read_roots()), self.run_id]  # the id: kill_strays
        command, self.isolation = boxed_command(
            server,
            self.scratch,
            namespaces=self.limits.namespaces,
            quota=self.limits.scratch_bytes,
            tasks=self.limits.tasks,
            uid=self.limits.box_uid,
        )
        self.hash_seed = fresh_hash_seed()
        (stdout_read, stdout_write), (stderr_read, stderr_write) = os.pipe(), os.pipe()
        try:
            self.process = subprocess.Popen(
                command,
                cwd=self.scratch,
                env=box_environment(self.scratch, self.hash_seed),
                stdin=subprocess.DEVNULL,
                stdout=stdout_write,
                stderr=stderr_write,
                pass_fds=(request_read, reply_write, report_write),
                start_new_session=True,
            )
        except BaseException:
            for fd in (stdout_read, stderr_read):
                os.close(fd)
            raise
        finally:
            for fd in (request_read, reply_write, report_write, stdout_write, stderr_write):
                os.close(fd)
        self._outputs = OutputTails(
            {"stdout": stdout_read, "stderr": stderr_read}, tail=TAIL, max_bytes=self.limits.output_bytes
        )
        self._reader = threading.Thread(target=self._read_reports, args=(report_read,), daemon=True)
        self._reader.start()

    @property
    def owned(self) -> bool:
        """Whether this process started the box (a process forked since holds a copy of its pipes, no more)."""
        return self.owner == os.getpid()

    @property
    def gone(self) -> bool:
        """Whether the box has been closed or killed here (its pipes are closed: nothing more is asked of it)."""
        return self._requests < 0

    @property
    def alive(self) -> bool:
        return self.owned and self.failure is None and self.process.poll() is None

    def call(
        self, request: _Message, *, stage: str | None = None, user: Callable[[UserTurn], UserLine] | None = None
    ) -> Any:
        """Send ``request`` and return its reply; :class:`BoxFailure` (box killed) or :class:`BoxedEnvError`.
        ``user`` answers the box's :class:`UserTurn` requests during this call (``None``: it may make none)."""
        stage = stage or str(getattr(request, "op", "call"))
        if self.failure is not None:
            raise type(self.failure)(f"the box already failed: {self.failure}", stage=stage)
        if not self.owned:
            raise BoxCrashed(f"the box belongs to process {self.owner}, which this one was forked from", stage=stage)
        began = time.monotonic()
        deadline = began + self._seconds(request)
        self._user_seconds = 0.0
        try:
            self._write(request.model_dump_json().encode("utf-8") + b"\n", deadline, stage)
            reply = self._reply(type(request), deadline, stage, user)
        except BoxFailure as exc:
            self._fail(exc)
        except BaseException:  # the user's model failed mid-call: the box waits for a line it will not get
            self.failure = BoxCrashed(f"the box was stopped during {stage}: its user's model failed", stage=stage)
            self.kill()
            raise
        finally:
            self.episode_seconds += time.monotonic() - began - self._user_seconds
        if isinstance(reply, Failed):
            raise BoxedEnvError(reply, stage)
        if isinstance(reply, ResetReply):
            self.resets += 1
            self._restore_shared(reply)
        return reply

    def _seconds(self, request: _Message) -> float:
        """How long the box may take to answer ``request``: its start, one call, or what is left of the
        episode's time (a reset starts a new episode), whichever is less (named in :attr:`_limit`)."""
        if isinstance(request, Start):
            self._limit = f"{self.limits.wall_seconds:g} s (BoxLimits.wall_seconds)"
            return self.limits.wall_seconds
        if isinstance(request, Reset):
            self.episode_seconds = 0.0
        left = self.limits.episode_seconds - self.episode_seconds
        if left < self.limits.step_seconds:
            self._limit = f"the episode's {self.limits.episode_seconds:g} s (BoxLimits.episode_seconds)"
            return max(0.0, left)
        self._limit = f"{self.limits.step_seconds:g} s (BoxLimits.step_seconds)"
        return self.limits.step_seconds

    def _reply(
        self, request: type[_Message], deadline: float, stage: str, user: Callable[[UserTurn], UserLine] | None
    ) -> Any:
        """The request's reply, after answering the user turns the box asks for first (with ``user``); the
        time ``user`` takes (the parent's model) is not the box's, so it moves the deadline."""
        turns = 0
        while True:
            line = self._read_line(deadline, stage)
            reply = self._parse(line, request, stage)
            if not isinstance(reply, UserTurn):
                return reply
            turns += 1
            if user is None:
                raise BoxProtocolError(
                    f"the box asked for a user turn during {stage}, where none is played", stage=stage
                )
            if turns > self.limits.user_turns_per_call:
                limit = self.limits.user_turns_per_call
                raise BoxProtocolError(f"the box asked for over {limit} user turns during one {stage}", stage=stage)
            if len(line) > MAX_USER_TURN_BYTES:
                raise BoxProtocolError(f"the box's user turn is over {MAX_USER_TURN_BYTES:,} bytes", stage=stage)
            began = time.monotonic()
            answer = user(reply)
            waited = time.monotonic() - began
            deadline += waited
            self._user_seconds += waited
            self._write(answer.model_dump_json().encode("utf-8") + b"\n", deadline, stage)

    @staticmethod
    def _parse(line: bytes, request: type[_Message], stage: str) -> Any:
        """The reply, parsed with the one model its request may get (or :class:`Failed`); a reply of another kind,
        or none of the protocol, is a :class:`BoxProtocolError`."""
        try:
            return REPLY_TO[request].validate_json(line)
        except (KeyError, ValidationError) as exc:
            error = exc
        try:
            kind = REPLY.validate_json(line).kind  # only to say what came instead
        except ValidationError:
            details = error.errors()[:1] if isinstance(error, ValidationError) else error
            raise BoxProtocolError(f"the box's reply is not one of the protocol: {details}", stage=stage) from None
        raise BoxProtocolError(f"the box answered {kind!r} to a {stage} request", stage=stage)

    def _restore_shared(self, reply: ResetReply) -> None:
        """Put back the reset ``info`` values the box sent as null because its :class:`Ready` declared them."""
        declared = {"tools": self.ready.tool_schemas, "policy": self.ready.policy_text}
        for key in reply.shared:
            reply.info[key] = declared[key]

    def _write(self, data: bytes, deadline: float, stage: str) -> None:
        """Write without blocking (the request pipe is non-blocking); wait for room only when it is full."""
        while data:
            try:
                data = data[os.write(self._requests, data) :]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise self._died(stage) from None
            if not wait_for(self._requests, select.POLLOUT, deadline):
                raise self._timeout(stage)

    def _read_line(self, deadline: float, stage: str) -> bytes:
        """The next reply line (:class:`~trace_envs.box.lines.LineReader`), or the box's failure."""
        try:
            return self._reply_lines.readline(deadline)
        except LineTooLong:
            limit = self.limits.reply_bytes
            raise BoxProtocolError(
                f"the box's reply is over {limit:,} bytes (BoxLimits.reply_bytes); it was read no further", stage=stage
            ) from None
        except PipeTimeout:
            raise self._timeout(stage) from None
        except PipeClosed:
            raise self._died(stage) from None

    def _timeout(self, stage: str) -> BoxTimeout:
        return BoxTimeout(f"the box did not answer within {self._limit} during {stage}", stage=stage)

    def _died(self, stage: str) -> BoxCrashed:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        code = self.process.returncode
        self._reader.join(timeout=2)
        self._outputs.finish(timeout=2)
        name = self.signals[0] if self.signals else None
        if name is None and code is not None and code < 0:
            name = signal.Signals(-code).name
        how = f"was killed by {name}" if name else f"exited with code {code}"
        return BoxCrashed(
            f"the box {how} during {stage}; stderr ends: {self.stderr_tail()[-300:].strip() or '(empty)'}",
            stage=stage,
            signal_name=name,
        )

    def record(self) -> BoxRecord:
        """The small record a pool keeps of this box once it is gone."""
        return BoxRecord(
            run_id=self.run_id,
            pid=self.process.pid,
            isolation=tuple(self.isolation),
            sealed=tuple(self.sealed),
            failure=self.failure,
            outputs={name: self._tail(name)[-TAIL:] for name in STREAMS},
        )

    def idle_and_sound(self) -> bool:
        """Whether an idle box (between calls) can serve another: alive, and nothing on its reply pipe. A box
        writes only to answer a call, so a byte or an end of file there means it died (perhaps right after its
        last reply, before its exit shows) or broke the protocol: it is then killed, and so never reused."""
        if not self.alive:
            return False
        if not self._reply_lines.buffer and not wait_for(self._replies, select.POLLIN, time.monotonic()):
            return True
        self.failure = BoxCrashed("the box wrote or closed its reply pipe between calls", stage="idle")
        self.kill()
        return False

    def fail(self, failure: BoxFailure) -> NoReturn:
        """Record ``failure``, kill the box and raise it (for a caller's own check of what the box said)."""
        self._fail(failure)

    def _fail(self, failure: BoxFailure) -> NoReturn:
        self.failure = failure
        self.kill()
        raise failure

    def _read_reports(self, fd: int) -> None:
        """Read the report pipe to its end; the first :data:`REPORT_LIMIT` bytes of it, in lines of at most
        :data:`MAX_REPORT_LINE` bytes, are each taken as untrusted text (:meth:`_report`); the rest is dropped."""
        kept = 0
        with open(fd, "rb", buffering=0) as stream:
            for line in bounded_lines(stream, MAX_REPORT_LINE):
                kept += len(line) + 1
                if kept <= REPORT_LIMIT:
                    self._report(line)

    def _report(self, line: bytes) -> None:
        """Take one report line as untrusted text: claims of isolation only before the box's :data:`SEALED`
        report (sent before it reads the module's text, so nothing of the module has run), refusals up to the
        hook's own :data:`~trace_envs.box.audit.MAX_REPORTED`, a few signals of known names; the rest is dropped."""
        with contextlib.suppress(ValueError, TypeError, AttributeError, RecursionError):
            message = json.loads(line)
            kind = message.get("type")
            if kind == "blocked" and self._refusals_kept < MAX_REPORTED:
                said = Refusal.model_validate({k: v for k, v in message.items() if k != "type"})
                cut = Refusal(event=said.event[:200], detail=said.detail[:500], stage=said.stage[:40])
                self.refusals.append(cut)
                self._refusals_kept += 1
            elif kind == "signal" and message.get("signal") in SIGNAL_NAMES and len(self.signals) < MAX_SIGNALS:
                self.signals.append(message["signal"])
            elif kind == SEALED:
                self._claims_closed = True
            elif kind == "isolation" and isinstance(message.get("name"), str) and not self._claims_closed:
                self.sealed.append(message["name"][:200])

    def stderr_tail(self) -> str:
        return self._tail("stderr")

    def stdout_tail(self) -> str:
        return self._tail("stdout")

    def _tail(self, name: str) -> str:
        """The end of what the box wrote to ``stdout`` or ``stderr`` (kept after the box is gone)."""
        if name in self.outputs:
            return self.outputs[name]
        return self._outputs.text(name)

    def _close_pipes(self) -> None:
        for fd in (self._requests, self._replies):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._requests = self._replies = -1

    def close(self) -> None:
        """Ask the box to end, then make sure it has (and that nothing it started is left)."""
        if self.owned and self.process.poll() is None and self.failure is None:
            with contextlib.suppress(OSError):
                os.write(self._requests, Close().model_dump_json().encode() + b"\n")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=1)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the box's whole process group and any stray, close the pipes, remove its folders (in a forked
        child: only close its copies of the pipes; the box is the parent's)."""
        if not self.owned:
            self._close_pipes()
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        kill_strays(self.run_id)
        self._outputs.finish(timeout=2)  # every process of the box is gone: the streams end
        for name in STREAMS:
            self.outputs[name] = self._tail(name)
        self._close_pipes()
        self._reply_lines.buffer = bytearray()  # a large reply it broke off: not kept with the box's record
        shutil.rmtree(self.scratch, ignore_errors=True)


__all__ = [
    "Ask",
    "BoxCrashed",
    "BoxFailure",
    "BoxLayerMissing",
    "BoxProcess",
    "BoxProtocolError",
    "BoxRecord",
    "BoxTimeout",
    "BoxedEnvError",
    "Step",
]
