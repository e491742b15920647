"""The audit policy's decisions, event by event (the hook itself is exercised in test_sandbox.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

import pytest

from trace_envs.box.audit import AuditPolicy, AuditReporter, make_hook


@pytest.fixture
def policy(tmp_path: Path) -> AuditPolicy:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    home = tmp_path / "home"
    (home / "venv").mkdir(parents=True)
    return AuditPolicy(str(scratch), denied_read_roots=[str(home)], allowed_read_roots=[str(home / "venv"), str(home)])


REFUSED = [
    ("socket.connect", (None, ("127.0.0.1", 80)), "network"),
    ("socket.getaddrinfo", ("example.com", 80, 0, 0, 0), "network"),
    ("urllib.Request", ("http://x", None, {}, "GET"), "network"),
    ("subprocess.Popen", ("sh", ["sh"], None, None), "processes"),
    ("os.system", (b"ls",), "processes"),
    ("os.fork", (), "processes"),
    ("os.exec", ("/bin/sh", ["sh"], None), "processes"),
    ("os.posix_spawn", ("/bin/sh", ["sh"], None), "processes"),
    ("ctypes.dlopen", ("libc.so.6",), "ctypes"),
    ("import", ("ctypes", None, [], [], []), "importing ctypes"),
    ("import", ("_posixsubprocess", None, [], [], []), "importing _posixsubprocess"),
    ("os.kill", (1, 9), "signals"),
    ("resource.setrlimit", (0, (1, 1)), "resource limits"),
    ("gc.get_objects", (None,), "interpreter's objects"),
    ("open", ("/proc/1/environ", "r", 0), "process state"),
    ("open", ("/proc/self/environ", "rb", 0), "process state"),
    ("os.listdir", ("/proc/1",), "process state"),
]


@pytest.mark.parametrize(("event", "args", "reason"), REFUSED)
def test_refused_events(policy: AuditPolicy, event: str, args: tuple[object, ...], reason: str) -> None:
    decision = policy.decide(event, args)
    assert decision is not None and reason in decision


def test_writes_only_inside_scratch(policy: AuditPolicy, tmp_path: Path) -> None:
    scratch = policy.scratch
    assert policy.decide("open", (f"{scratch}/out.txt", "w", 0)) is None
    assert policy.decide("open", (os.devnull, "w", 0)) is None
    assert "outside the scratch" in (policy.decide("open", (str(tmp_path / "x"), "a", 0)) or "")
    assert "outside the scratch" in (policy.decide("open", (str(tmp_path / "x"), None, os.O_WRONLY)) or "")
    assert "outside the scratch" in (policy.decide("os.rename", (f"{scratch}/a", str(tmp_path / "b"), -1, -1)) or "")
    assert "outside the scratch" in (policy.decide("os.link", ("/etc/passwd", f"{scratch}/p", -1, -1, True)) or "")
    assert "outside the scratch" in (policy.decide("os.remove", (str(tmp_path / "x"), -1)) or "")
    # a low-level open with a relative path might be relative to a directory descriptor
    assert "relative path" in (policy.decide("open", ("x.txt", None, os.O_RDONLY)) or "")


def test_a_symlink_out_of_scratch_does_not_help(policy: AuditPolicy, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x", encoding="utf-8")
    link = Path(policy.scratch) / "link"
    link.symlink_to(outside)
    assert "outside the scratch" in (policy.decide("open", (str(link), "w", 0)) or "")


def test_home_reads_are_refused_except_where_python_lives(policy: AuditPolicy, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert "home directory" in (policy.decide("open", (str(home / ".ssh" / "id_rsa"), "r", 0)) or "")
    assert "home directory" in (policy.decide("os.scandir", (str(home),)) or "")
    assert policy.decide("open", (str(home / "venv" / "site.py"), "r", 0)) is None
    # the home itself was listed as an allowed root: it is dropped, since it would undo the denial
    assert str(home) not in policy.allowed
    assert policy.decide("open", ("/etc/hostname", "r", 0)) is None


def test_ordinary_events_pass(policy: AuditPolicy) -> None:
    for event, args in [("exec", (None,)), ("compile", (b"", "f")), ("import", ("json", None, [], [], []))]:
        assert policy.decide(event, args) is None


def test_the_hook_reports_once_and_raises_even_when_the_caller_catches(policy: AuditPolicy) -> None:
    read_fd, write_fd = os.pipe()
    hook = make_hook(policy, AuditReporter(write_fd))
    for _ in range(3):
        with pytest.raises(PermissionError, match=r"refused os\.fork"):
            hook("os.fork", ())
    hook("exec", (None,))
    os.close(write_fd)
    with open(read_fd, encoding="utf-8") as channel:
        lines = channel.read().splitlines()
    assert len(lines) == 1 and '"event": "os.fork"' in lines[0]


def test_the_hook_asks_the_policy_once_per_allowed_name_only_event_and_every_time_for_paths(
    policy: AuditPolicy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``builtins.id`` fires on every ``id()`` (a deepcopy in a step raises it dozens of times): decided once.
    What depends on the arguments (``open``, writes, imports) is decided on every event, as before."""
    read_fd, write_fd = os.pipe()
    asked: list[str] = []
    decide = policy.decide

    def asking(event: str, args: tuple[object, ...]) -> str | None:
        asked.append(event)
        return decide(event, args)

    monkeypatch.setattr(policy, "decide", asking)
    hook = make_hook(policy, AuditReporter(write_fd))
    for _ in range(5):
        hook("builtins.id", (1,))
        hook("open", (f"{policy.scratch}/out.txt", "w", 0))
    assert asked.count("builtins.id") == 1 and asked.count("open") == 5
    with pytest.raises(PermissionError, match="outside the scratch"):
        hook("open", (str(tmp_path / "outside.txt"), "w", 0))  # an allowed open lets no other path through
    for _ in range(2):
        with pytest.raises(PermissionError, match=r"refused os\.fork"):
            hook("os.fork", ())  # a refused name is refused (and asked) every time
    assert asked.count("os.fork") == 2
    os.close(write_fd)
    os.close(read_fd)


class _Name(str):
    """A str subclass of the module's, as an attacker passes to ``__import__``: its ``__str__`` would run
    inside the hook if the hook called ``str()`` on it."""

    ran: ClassVar[list[str]] = []

    def __str__(self) -> str:
        self.ran.append("__str__")
        return "json"

    def split(self, *args: object, **kwargs: object) -> list[str]:  # type: ignore[override]
        self.ran.append("split")
        return ["json"]


class _Path:
    ran: ClassVar[list[str]] = []

    def __fspath__(self) -> str:
        self.ran.append("__fspath__")
        return "/tmp/harmless"


class _Flags(int):
    ran: ClassVar[list[str]] = []

    def __and__(self, other: int) -> int:
        self.ran.append("__and__")
        return 0


class _Mode(str):
    ran: ClassVar[list[str]] = []

    def __contains__(self, item: object) -> bool:
        self.ran.append("__contains__")
        return False


@pytest.mark.parametrize(
    ("event", "args", "ran"),
    [
        ("import", (_Name("ctypes"), None, [], [], []), _Name.ran),
        ("open", (_Path(), "r", 0), _Path.ran),
        ("open", ("/tmp/x", None, _Flags(os.O_WRONLY)), _Flags.ran),
        ("open", ("/tmp/x", _Mode("w"), 0), _Mode.ran),
        ("os.remove", (_Path(), -1), _Path.ran),
        ("os.listdir", (_Name("/tmp"),), _Name.ran),
    ],
    ids=["str-subclass-import", "pathlike-open", "int-subclass-flags", "str-subclass-mode", "pathlike-remove", "list"],
)
def test_an_argument_only_the_modules_code_could_read_is_refused_unread(
    policy: AuditPolicy, event: str, args: tuple[object, ...], ran: list[str]
) -> None:
    """Issue 34: deciding an import called ``str()`` on the module's own object, so its ``__str__`` ran inside
    the hook (with every other event let through meanwhile). Only exact str, bytes and int are read now."""
    ran.clear()
    decision = policy.decide(event, args)
    assert decision is not None and "only exact str, bytes and int" in decision
    assert ran == []


def test_exact_paths_bytes_and_descriptors_are_still_decided(policy: AuditPolicy, tmp_path: Path) -> None:
    assert policy.decide("open", (Path(policy.scratch) / "out.txt", "w", 0)) is None
    assert "outside the scratch" in (policy.decide("open", (tmp_path / "x", "w", 0)) or "")
    assert "outside the scratch" in (policy.decide("open", (os.fsencode(tmp_path / "x"), None, os.O_WRONLY)) or "")
    assert policy.decide("open", (3, "r", 0)) is None
    assert policy.decide("os.listdir", (None,)) is None


def test_an_event_raised_while_another_is_decided_is_refused_not_let_through(
    policy: AuditPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old hook let every event through while it decided one (a ``busy`` flag): code that ran inside the
    decision could fork or open anything. Now the inner event is refused and reported."""
    read_fd, write_fd = os.pipe()
    hook = make_hook(policy, AuditReporter(write_fd))
    inner: list[BaseException] = []
    decide = policy.decide

    def reentering(event: str, args: tuple[object, ...]) -> str | None:
        if event == "import":
            try:
                hook("os.system", (b"sh",))
            except PermissionError as exc:
                inner.append(exc)
        return decide(event, args)

    monkeypatch.setattr(policy, "decide", reentering)
    hook("import", ("json", None, [], [], []))
    assert len(inner) == 1 and "while another is being decided" in str(inner[0])
    os.close(write_fd)
    with open(read_fd, encoding="utf-8") as channel:
        assert '"event": "os.system"' in channel.read()


FRAME_EVENTS = [
    ("sys._getframe", (None,)),
    ("sys._current_frames", ()),
    ("sys.settrace", (None,)),
    ("object.__getattr__", (None, "gi_frame")),
    ("object.__getattr__", (None, "tb_frame")),
]


@pytest.mark.parametrize(("event", "args"), FRAME_EVENTS)
def test_a_frame_is_refused_to_code_that_is_not_a_trusted_module(
    policy: AuditPolicy, event: str, args: tuple[object, ...]
) -> None:
    """Issue 34, third round: a module took sys._getframe and walked to the server's reporter. Code run with
    globals no loaded module has (the module's, or exec'd with its own) is refused every frame and reported;
    a loaded module's code (here this test's) is not."""
    read_fd, write_fd = os.pipe()
    hook = make_hook(policy, AuditReporter(write_fd))
    hook(event, args)  # this test module was loaded before the hook: trusted
    with pytest.raises(PermissionError, match="frames"):
        exec("hook(event, args)", {"hook": hook, "event": event, "args": args})
    os.close(write_fd)
    with open(read_fd, encoding="utf-8") as channel:
        lines = channel.read().splitlines()
    assert len(lines) == 1 and "frames" in lines[0]


def test_a_restricted_attribute_that_is_not_a_frame_is_let_through_without_the_policy(
    policy: AuditPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``__code__`` reads raise ``object.__getattr__`` often: they cost a name check, not the policy's."""
    read_fd, write_fd = os.pipe()
    asked: list[str] = []
    monkeypatch.setattr(policy, "decide", lambda event, args: asked.append(event))
    hook = make_hook(policy, AuditReporter(write_fd))
    exec("hook('object.__getattr__', (None, '__code__'))", {"hook": hook})
    assert asked == []
    os.close(write_fd)
    os.close(read_fd)


def test_the_reporter_writes_what_json_dumps_writes_with_functions_bound_when_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A module that sets ``os.write`` or ``json.dumps`` changes nothing of what the reporter writes."""
    import json

    from trace_envs.box.audit import json_line

    message = {"type": "blocked", "event": "open", "detail": 'a "quoted" \u00e9 path\n', "stage": "import"}
    assert json_line(message) == (json.dumps(message) + "\n").encode()
    read_fd, write_fd = os.pipe()
    reporter = AuditReporter(write_fd)
    monkeypatch.setattr(os, "write", lambda fd, data: len(data))
    monkeypatch.setattr(json, "dumps", lambda *args, **kwargs: "{}")
    reporter.blocked("open", "x")
    monkeypatch.undo()
    os.close(write_fd)
    with open(read_fd, encoding="utf-8") as channel:
        assert json.loads(channel.read()) == {"type": "blocked", "event": "open", "detail": "x", "stage": "startup"}


def test_a_reporter_whose_pipe_was_replaced_ends_the_process() -> None:
    """``os.dup2`` of another pipe over the number in ``sys.argv`` would make every refusal silent: the reporter
    sees its descriptor is not its pipe any more and exits (code 4) rather than refuse unreported."""
    import subprocess
    import sys

    code = (
        "import os\nfrom trace_envs.box.audit import AuditReporter\n"
        "r, w = os.pipe()\nreporter = AuditReporter(w)\nother_r, other_w = os.pipe()\nos.dup2(other_w, w)\n"
        "reporter.blocked('open', 'x')\nprint('not stopped')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4 and "not stopped" not in done.stdout, done
