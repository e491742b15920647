"""The audit policy's decisions, event by event (the hook itself is exercised in test_sandbox.py)."""

from __future__ import annotations

import os
from pathlib import Path

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
