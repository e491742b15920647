"""The audit hook installed inside the sandbox before the candidate module is imported.

It refuses sockets, new processes, native code, signals, rlimit changes, writes outside the scratch
directory, reads of process state (``/proc/<pid>/...``) or the user's home, and frames asked for by any code
but the trusted libraries' (:func:`make_hook`), and reports every refusal on the report channel at once, so a
module that catches the ``PermissionError`` and carries on is still rejected. An allowed event decided by its
name alone is remembered, so the many ``builtins.id`` events of an env's step cost a set lookup each, and an
``object.__getattr__`` of an attribute that is not a frame (``__code__``) a check of its name.

Deciding never runs the module's code: an argument is read only when it is an exact ``str``, ``bytes`` or
``int`` (or an unpatched :class:`pathlib.PurePosixPath`), never through a subclass's ``__str__``,
``__fspath__``, ``__contains__`` or ``__and__``, which the module could define; anything else is refused.
And no event passes because another is being decided: an event raised while the hook decides one can only
come from such code, so it is refused too. CPython audit hooks are a tripwire, not a security boundary:
code running in the same interpreter can get around them. The kernel layers of :mod:`trace_envs.box.launch`
are what confine a determined attacker.
"""

from __future__ import annotations

import os
import pathlib
import sys
import types
from _thread import get_ident
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.fork", "os.forkpty", "pty.spawn", "os.startfile", "webbrowser.open"}
)
PROCESS_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")
NETWORK_EVENTS = frozenset({"urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect"})
NETWORK_PREFIXES = ("socket.", "ssl.", "poplib.", "imaplib.", "nntplib.", "telnetlib.")
SIGNAL_EVENTS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})
LIMIT_EVENTS = frozenset({"resource.setrlimit", "resource.prlimit"})
INTROSPECTION_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
BLOCKED_IMPORTS = frozenset({"ctypes", "_ctypes", "socket", "_socket", "ssl", "_ssl", "_posixsubprocess", "pty"})
"""Modules whose import alone is refused (only when not already loaded by trusted code)."""
WRITE_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.chflags": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "shutil.chown": (0,),
    "shutil.unpack_archive": (1,),
    "shutil.make_archive": (0,),
    "sqlite3.connect": (0,),
}
"""Events that change the file system, and which of their arguments are the paths they change."""
READ_EVENTS: dict[str, tuple[int, ...]] = {"os.listdir": (0,), "os.scandir": (0,)}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
MAX_REPORTED = 200
PATH_EVENTS = frozenset({"import", "open", *WRITE_EVENTS, *READ_EVENTS})
"""Events decided by their arguments; every other event is decided by its name alone."""
NESTED = "an audit event raised while another is being decided (code run inside the hook) is not allowed"
MAX_REMEMBERED = 4096
"""How many allowed event names the hook remembers (a module may raise any number of its own events)."""
FRAME_EVENTS = frozenset(
    {"sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile"}
)
"""Events that hand out frames (a trace or profile function is given each one): from a frame, ``f_back`` and ``f_locals`` (which raise no event) reach every frame
below it and its locals (the box server's own among them)."""
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
"""The attributes whose read raises ``object.__getattr__`` and gives a frame (a traceback's, a generator's...)."""
DECIDED_BY_CALLER = FRAME_EVENTS | {"object.__getattr__"}
"""Events decided each time, by their arguments and by whose code raised them (never remembered by name)."""
LOOKING_EVENTS = frozenset({"sys._getframe", "builtins.id"})
"""The events the hook itself raises while it looks at the frame of an event's caller (let through then only)."""
FRAMES = "reaching the interpreter's frames is not allowed (only the trusted libraries' own code may)"
REPORT_TAMPERED = 4
"""The box's exit code when its report pipe is no longer the one it was given: it cannot report, so it stops."""


PATH_TYPES = (pathlib.PurePosixPath, pathlib.PosixPath)
"""The path objects the hook reads (exact types only, and only while their methods are pathlib's own)."""
_PATH_METHODS = {name: vars(pathlib.PurePath)[name] for name in ("__fspath__", "__str__", "_format_parsed_parts")}


class Untrusted(Exception):
    """An event argument the hook refuses to read, since reading it could run the module's code."""


def exact_text(value: Any) -> str:
    """``value`` as text, read without running any code but the interpreter's: an exact ``str`` or ``bytes``,
    or an exact pathlib path whose methods nobody replaced; :class:`Untrusted` for anything else (a ``str``
    subclass's ``__str__`` or a path-like's ``__fspath__`` would be the module's own code, run inside the hook)."""
    kind = type(value)
    if kind is str:
        return str(value)
    if kind is bytes:
        return os.fsdecode(value)
    if kind in PATH_TYPES and all(vars(pathlib.PurePath).get(n) is m for n, m in _PATH_METHODS.items()):
        text = os.fspath(value)
        if type(text) is str:
            return text
    raise Untrusted(f"an argument of type {kind.__name__} (only exact str, bytes and int arguments are read)")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class AuditPolicy:
    """Decides, for one audit event, whether it is refused and why (``None``: allowed)."""

    def __init__(self, scratch: str, denied_read_roots: Sequence[str], allowed_read_roots: Sequence[str]):
        self.scratch = os.path.realpath(scratch)
        self.denied = [os.path.realpath(root) for root in denied_read_roots]
        # An allowed root that contains a denied one (the home itself on sys.path) would undo the denial.
        self.allowed = [
            real
            for real in (os.path.realpath(root) for root in allowed_read_roots)
            if real != "/" and not any(_under(denied, real) for denied in self.denied)
        ] + [self.scratch]

    def decide(self, event: str, args: tuple[Any, ...]) -> str | None:
        """Why ``event`` is refused, or None; an argument it cannot read safely (:func:`exact_text`) is a refusal."""
        try:
            return self._decide(event, args)
        except Untrusted as exc:
            return f"{exc} is not allowed in {event}"

    def _decide(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event.startswith(NETWORK_PREFIXES) or event in NETWORK_EVENTS:
            return "network access is not allowed"
        if event in PROCESS_EVENTS or event.startswith(PROCESS_PREFIXES):
            return "starting processes is not allowed"
        if event.startswith("ctypes."):
            return "native code through ctypes is not allowed"
        if event == "import":
            name = exact_text(args[0]) if args else ""
            if name.split(".")[0] in BLOCKED_IMPORTS:
                return f"importing {name} is not allowed"
            return None
        if event == "open":
            path, mode, flags = [*args, None, None, None][:3]
            raw = mode is None  # os.open: may be relative to a directory descriptor we cannot see
            if mode is not None:
                writing = any(c in exact_text(mode) for c in "wax+")
            else:
                writing = bool(_exact_int(flags) & WRITE_FLAGS)
            return self.path_reason(path, write=writing, raw=raw)
        if event in WRITE_EVENTS:
            for index in WRITE_EVENTS[event]:
                if index < len(args):
                    reason = self.path_reason(args[index], write=True, raw=True)
                    if reason:
                        return reason
            return None
        if event in READ_EVENTS:
            path = args[0] if args else None
            return self.path_reason("." if path is None else path, write=False, raw=False)
        if event in SIGNAL_EVENTS:
            return "sending signals to processes is not allowed"
        if event in LIMIT_EVENTS:
            return "changing resource limits is not allowed"
        if event in INTROSPECTION_EVENTS:
            return "walking the interpreter's objects is not allowed"
        return None

    def path_reason(self, path: Any, *, write: bool, raw: bool) -> str | None:
        if path is None or type(path) is int:
            return None  # an already-open descriptor: what it names was checked when it was opened
        text = exact_text(path)
        if text == ":memory:":
            return None
        if raw and not os.path.isabs(text):
            return f"a relative path in a low-level call ({text!r}) is not allowed; use an absolute path in scratch"
        real = os.path.realpath(text)
        if write:
            if real == os.devnull or _under(real, self.scratch):
                return None
            return f"writing {real} (outside the scratch directory) is not allowed"
        parts = real.split("/")
        if len(parts) > 2 and parts[1] == "proc" and (parts[2].isdigit() or parts[2] in ("self", "thread-self")):
            return f"reading process state ({real}) is not allowed"
        if any(_under(real, root) for root in self.denied) and not any(_under(real, root) for root in self.allowed):
            return f"reading {real} (a home directory) is not allowed"
        return None


def _exact_int(value: Any) -> int:
    """``value`` when it is an exact ``int`` (0 for None); :class:`Untrusted` otherwise (an ``int`` subclass's
    ``__and__`` is the module's code)."""
    if value is None:
        return 0
    if type(value) is int:
        return int(value)
    raise Untrusted(f"an argument of type {type(value).__name__} (only exact str, bytes and int arguments are read)")


def json_line(message: dict[str, str], encode: Callable[[str], str] = encode_basestring_ascii) -> bytes:
    """``message`` as one JSON line (``json.dumps``'s format), written with the C encoder bound here: no function a
    module could replace afterwards (``json.dumps`` reads globals of ``json`` that a module may set). A value that
    is not an exact ``str`` is written as ``"?"``."""
    fields = ", ".join(
        f"{encode(key)}: {encode(value if type(value) is str else '?')}" for key, value in message.items()
    )
    return ("{" + fields + "}\n").encode("ascii")


class AuditReporter:
    """Writes refusals and stage changes as JSON lines to the report channel (a pipe descriptor).

    It keeps what it writes with out of a module's reach where it can: ``os.write``, ``os.fstat`` and
    :func:`json_line` are bound when it is made (a module that sets ``os.write`` changes nothing here), it has no ``__dict__``, and the box
    server holds it only in the hook and the start-up functions that have returned (no frame's locals name it).
    Before each line it checks that its descriptor is still the pipe it was given: one that was closed or
    replaced (``os.dup2`` over the number in ``sys.argv``) ends the box (:data:`REPORT_TAMPERED`), since a
    refusal it could not report would pass for none."""

    __slots__ = ("_exit", "_fstat", "_line", "_write", "fd", "pipe", "seen", "stages")

    def __init__(self, channel_fd: int, stages: list[str] | None = None):
        self.fd = channel_fd
        self.stages = stages if stages is not None else ["startup"]
        """The stage under way, as the one item of a list the box server may hold instead of the reporter."""
        self.seen: set[tuple[str, str]] = set()
        self._write, self._fstat, self._exit, self._line = os.write, os.fstat, os._exit, json_line
        found = self._fstat(channel_fd)
        self.pipe = (found.st_dev, found.st_ino)

    def send(self, message: dict[str, str]) -> None:
        """Write ``message`` as one line; the box ends if its descriptor is not its pipe any more."""
        try:
            found = self._fstat(self.fd)
            same = (found.st_dev, found.st_ino) == self.pipe
        except OSError:
            same = False
        if not same:
            self._exit(REPORT_TAMPERED)
        data = self._line(message)
        try:
            while data:
                written = self._write(self.fd, data)
                data = data[written:]
        except OSError:
            pass  # the parent is gone: nothing to report to

    @property
    def stage(self) -> str:
        """The stage under way (named in each refusal)."""
        return self.stages[0]

    @stage.setter
    def stage(self, stage: str) -> None:
        self.stages[0] = stage

    def set_stage(self, stage: str) -> None:
        self.stage = stage
        self.send({"type": "stage", "stage": stage})

    def blocked(self, event: str, detail: str, limit: int = MAX_REPORTED) -> None:
        key = (event, detail)
        if key in self.seen or len(self.seen) >= limit:
            return
        self.seen.add(key)
        self.send({"type": "blocked", "event": event, "detail": detail[:500], "stage": self.stage})


def module_dicts() -> dict[int, dict[str, Any]]:
    """The globals of every module loaded now, by id: code run from them is the trusted libraries' own."""
    found = {}
    for module in list(sys.modules.values()):
        namespace = vars(module) if type(module) is types.ModuleType else None
        if type(namespace) is dict:
            found[id(namespace)] = namespace
    return found


def frame_reason(
    event: str, args: tuple[Any, ...], events: frozenset[str] = FRAME_EVENTS, names: frozenset[str] = FRAME_ATTRIBUTES
) -> str | None:
    """:data:`FRAMES` for an event that hands out a frame (whoever asks; :func:`make_hook` lets the trusted
    libraries' own code through), else None. The sets are bound when this is defined (not read from the module's
    globals, which a module may set)."""
    if event in events:
        return FRAMES
    if event == "object.__getattr__":
        name = args[1] if len(args) > 1 else None
        if type(name) is not str or name in names:
            return FRAMES
    return None


def make_hook(
    policy: AuditPolicy, reporter: AuditReporter, trusted_roots: Sequence[str] = ()
) -> Callable[[str, tuple[Any, ...]], None]:
    """The hook function: refuse and report.

    An event the policy decides by its name alone (not in :data:`PATH_EVENTS`) and allowed once is let through
    at once after that: ``builtins.id``, raised many times in a step, costs a set lookup instead of the policy's
    checks, with the same decision (``object.__getattr__`` of a name that is not a frame's, a check of the name). The policy raises no event of its own, so an
    event raised while another is being decided is the module's code running inside the hook: it is refused
    (never let through, as a re-entrancy guard would).

    An event that hands out a frame (:func:`frame_reason`) is refused unless the code that raised it runs with
    the globals of a module loaded before the hook (the trusted libraries: ``typing`` and pydantic ask for their
    caller's frame, ``traceback`` reads a traceback's) or of one loaded since from ``trusted_roots``; the hook
    looks at that code's frame with ``sys._getframe`` itself, which it alone may do while it decides."""
    deciding: set[int] = set()  # the threads now inside the policy (one event each)
    looking: set[int] = set()  # the threads whose hook asks for its caller's frame
    allowed: set[str] = set()
    trusted = module_dicts()
    roots = tuple(root.rstrip("/") + "/" for root in trusted_roots if root.rstrip("/"))
    getframe, modules = sys._getframe, sys.modules
    framing, frames, looking_events, nested = frame_reason, FRAMES, LOOKING_EVENTS, NESTED  # bound: see json_line
    never_remembered = PATH_EVENTS | DECIDED_BY_CALLER

    def trusted_caller() -> bool:
        """Whether the code that raised the event runs with a trusted module's globals (it runs no code of the
        module's: the globals are an exact dict, the names and paths read only when exact ``str``)."""
        looking.add(thread := get_ident())
        try:
            namespace = getframe(2).f_globals
            if trusted.get(id(namespace)) is namespace:
                return True
            name, path = namespace.get("__name__"), namespace.get("__file__")
            if type(name) is not str or type(path) is not str or not path.startswith(roots):
                return False
            module = modules.get(name)
            return type(module) is types.ModuleType and vars(module) is namespace
        finally:
            looking.discard(thread)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        thread = get_ident()
        if thread in deciding:
            if thread in looking and event in looking_events:
                return  # the hook's own look at its caller's frame
            reporter.blocked(event, nested)
            raise PermissionError(f"trace-envs sandbox refused {event}: {nested}")
        if event in allowed or (event == "object.__getattr__" and not framing(event, args)):
            return  # a name decided before, or a restricted attribute that is not a frame (``__code__``)
        deciding.add(thread)
        try:
            reason = policy.decide(event, args) or framing(event, args)
            if reason == frames and trusted_caller():
                reason = None
            if reason is not None:
                reporter.blocked(event, reason)
            elif event not in never_remembered and len(allowed) < MAX_REMEMBERED:
                allowed.add(event)
        finally:
            deciding.discard(thread)
        if reason is not None:
            raise PermissionError(f"trace-envs sandbox refused {event}: {reason}")

    return hook


def install(policy: AuditPolicy, reporter: AuditReporter, trusted_roots: Sequence[str] = ()) -> None:
    """Install the hook for the rest of this process's life (audit hooks cannot be removed); see
    :func:`make_hook` for ``trusted_roots``."""
    sys.addaudithook(make_hook(policy, reporter, trusted_roots))
