"""Red team, kernel layers alone: the modules of ``redteam/kernel/`` run in boxes with the audit hook off (as if
an attacker had switched it off from inside, as issue 34's did), and every attack still fails. Each module is
the project's control plus a payload that runs at import and again on the action ``leak``, which returns what
it got as an observation; the host checks what would show that it fired: the stolen text, a listener, a System
V key, a canary, the box's processes and its memory.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trace_envs.box import BoxLimits, BoxProcess
from trace_envs.box.launch import TIME_NAMESPACE, box_processes, needed_roots
from trace_envs.box.layers import missing_layers
from trace_envs.box.mounts import under
from trace_envs.box.protocol import Reset, Step

from ..conftest import grown_temp_files, temp_names
from .conftest import GOOD_MODULE, REDTEAM

KERNEL = REDTEAM / "kernel"
KEY = "FAKE-PRIVATE-KEY-3d9a"
HOOK_OFF = BoxLimits(audit_hook=False, wall_seconds=60)

pytestmark = pytest.mark.skipif(bool(missing_layers()), reason=f"this host lacks box layers: {missing_layers()}")


def kernel_source(name: str, **values: str) -> str:
    text = (KERNEL / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"__{key.upper()}__", value)
    return text


def loot(source: str, limits: BoxLimits = HOOK_OFF) -> tuple[str, BoxProcess]:
    """Start a box of ``source``, play one episode and ask for the loot; returns it and the (closed) box."""
    box = BoxProcess(source, limits=limits)
    try:
        assert "audit hook" not in box.sealed
        box.call(Reset(seed=0))
        reply = box.call(Step(action="leak"))
        return str(reply.observation), box
    finally:
        box.close()


class UnixListener:
    """A unix socket on the host's file system (where a docker socket would be) that counts what it receives."""

    def __init__(self, path: Path):
        self.path = str(path)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        os.chmod(self.path, 0o777)
        self.server.listen()
        self.server.settimeout(0.1)
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                self.received.append(connection.recv(1024))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.server.close()


@pytest.fixture
def unix_listener(tmp_path: Path) -> Iterator[UnixListener]:
    listener = UnixListener(tmp_path / "docker.sock")
    try:
        yield listener
    finally:
        listener.close()


def test_the_control_module_runs_with_every_layer_and_without_the_hook() -> None:
    box = BoxProcess(GOOD_MODULE.read_text(encoding="utf-8"), limits=HOOK_OFF)
    try:
        box.call(Reset(seed=0))
        layers = " | ".join([*box.isolation, *box.sealed])
    finally:
        box.close()
    for layer in ("ipc namespace", "uts namespace", "landlock file-system view", "seccomp filter", "task limit"):
        assert layer in layers, layers


def test_host_files_homes_the_manifest_and_other_processes_stay_unreadable(tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text(KEY, encoding="utf-8")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY, encoding="utf-8")
    manifest = tmp_path / "manifest.json"
    manifest.write_text('{"validated": "' + KEY + '"}', encoding="utf-8")
    source = kernel_source(
        "host_files.py", keyfile=str(key), home=str(home), manifest=str(manifest), parent=str(os.getpid())
    )
    stolen, _ = loot(source)
    assert KEY not in stolen, stolen
    for attack in ("tmp key", "home key", "list home", "manifest", "host environ", "etc"):
        assert f"{attack}: ok" not in stolen, stolen
    assert "tmp key stat: ok" not in stolen, stolen  # the host's /tmp is hidden: not even its metadata
    assert "list tmp: PermissionError" in stolen, stolen  # outside the Landlock view (and empty under it)


def test_the_box_clocks_start_with_the_box_not_at_the_hosts_boot() -> None:
    began = time.monotonic()
    stolen, box = loot(kernel_source("host_files.py", keyfile="/none", home="/none", manifest="/none", parent="1"))
    lived = time.monotonic() - began
    if TIME_NAMESPACE not in box.isolation:
        pytest.skip("unshare gives no time namespace on this host (Linux 5.6 and later)")
    for clock in ("boot clock", "monotonic clock"):
        found = re.search(rf"{clock}: ok ([0-9.]+)", stolen)
        assert found is not None and float(found.group(1)) < lived + 1.0, stolen  # the host's uptime is gone


def test_the_benchmarks_own_tasks_stay_unreadable_while_the_kit_is_read() -> None:
    import trace_envs.targets.device.builtin as builtin

    stolen, _ = loot(kernel_source("eval_data_files.py"))  # it finds the package the box runs on itself
    test_task = next(spec[0] for spec in builtin.SPECS if spec[3] == "test")
    assert test_task not in stolen and "Petrucci" not in stolen, stolen
    for attack in ("test split", "import split"):
        assert f"{attack}: ok" not in stolen, stolen
    assert "compiled split: ok []" in stolen or "compiled split: PermissionError" in stolen, stolen
    assert "kit: ok" in stolen, stolen  # the contract the module imports is still read


def test_a_host_unix_socket_never_hears_from_the_box(unix_listener: UnixListener) -> None:
    source = kernel_source("host_unix_socket.py", socket=unix_listener.path, port="9")
    stolen, _ = loot(source)
    assert unix_listener.received == []
    assert "unix connect: PermissionError" in stolen and "socketpair: PermissionError" in stolen, stolen
    assert "tcp: ok" not in stolen


def host_ipc_keys() -> set[str]:
    """Keys of the host's System V segments, queues and semaphore sets (the second column of /proc/sysvipc)."""
    keys = set()
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text(encoding="ascii").splitlines()[1:]
        keys |= {line.split()[0] for line in lines if line.split()}
    return keys


def test_no_system_v_or_posix_ipc_object_is_made_or_left_on_the_host() -> None:
    key = 0x7E34_1D01
    stolen, _ = loot(kernel_source("sysv_ipc.py", shmkey=str(key)))
    for call in ("shmget", "msgget", "semget", "mq_open"):
        assert f"{call}: ok '-1 errno 1'" in stolen, stolen  # EPERM from the filter
    assert str(key) not in host_ipc_keys()
    assert not Path("/dev/mqueue/trace-redteam").exists()


def test_an_output_flood_reaches_no_disk_and_the_parent_reads_only_its_limit(tmp_path: Path) -> None:
    """A thread that writes to stdout and stderr without end, through copies of them too: the parent drains
    the pipes, keeps only their ends, and closes each after ``output_bytes``; every further write fails, no file
    on the host grows, and the box still answers."""
    before = temp_names()
    limits = HOOK_OFF.model_copy(update={"output_bytes": 2**20})
    box = BoxProcess(kernel_source("output_flood.py"), limits=limits)
    try:
        box.call(Reset(seed=0))
        deadline = time.monotonic() + 20
        while len(box._outputs.flooded) < 2 and time.monotonic() < deadline:  # both streams hit their limit
            time.sleep(0.05)
        box.call(Reset(seed=1))
        loot = str(box.call(Step(action="leak")).observation)
    finally:
        box.close()
    assert sorted(box._outputs.flooded) == ["stderr", "stdout"], loot
    assert "errno 32" in loot  # EPIPE: the pipes are closed, copies included
    written = int(loot.split("written ", 1)[1].split(";", 1)[0])
    assert written <= 2 * 2**20 + 4 * 2**17, f"{written} bytes went somewhere beyond the two pipes"
    for name in ("stdout", "stderr"):
        tail = box.stdout_tail() if name == "stdout" else box.stderr_tail()
        assert len(tail) < 2200 and tail.endswith(f"[{name} closed after 1,048,576 bytes (BoxLimits.output_bytes)]")
    assert not os.path.exists(box.scratch), "the box's scratch outlived it"
    assert not grown_temp_files(before)


def test_no_process_starts_threads_are_bounded_and_memory_stops_at_the_limit() -> None:
    limits = BoxLimits(audit_hook=False, wall_seconds=120, memory_bytes=768 * 2**20)
    box = BoxProcess(kernel_source("processes_and_memory.py"), limits=limits)
    try:
        before = box_processes(box.run_id)
        box.call(Reset(seed=0))
        stolen = str(box.call(Step(action="leak")).observation)
        after = box_processes(box.run_id)
        peaks = [peak_memory(pid) for pid in after]
    finally:
        box.close()
    assert "fork: PermissionError" in stolen, stolen
    assert sorted(after) == sorted(before), "the box started processes"
    started = max(int(line.rsplit(" ", 1)[1]) for line in stolen.splitlines() if line.startswith("threads started"))
    assert started < limits.tasks, stolen  # pid_max of the box's pid namespace
    assert "memory: MemoryError" in stolen, stolen
    assert max(peaks) <= limits.memory_bytes, peaks  # one process: RLIMIT_AS is the whole box's


def peak_memory(pid: int) -> int:
    """VmPeak of ``pid``, in bytes (0 if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return 0
    line = next((line for line in status.splitlines() if line.startswith("VmPeak:")), "VmPeak: 0 kB")
    return int(line.split()[1]) * 1024


def test_no_shell_runs_whatever_the_route(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("original", encoding="utf-8")
    stolen, box = loot(kernel_source("exec_shell.py", canary=str(canary)))
    assert canary.read_text(encoding="utf-8") == "original"
    for route in ("subprocess", "posix_spawn", "execv"):
        assert f"{route}: PermissionError" in stolen, stolen
    assert "system: ok 0" not in stolen, stolen
    assert box.failure is None  # the box still answered: no exec replaced it


def test_no_namespace_mount_or_ptrace_escape(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("original", encoding="utf-8")
    stolen, _ = loot(kernel_source("ptrace_unshare.py", canary=str(canary)))
    assert canary.read_text(encoding="utf-8") == "original"
    for call in ("unshare", "ptrace attach", "ptrace traceme", "setns", "mount", "chroot"):
        assert f"{call}: ok '-1 errno 1'" in stolen, stolen


def test_the_box_runs_as_an_unprivileged_uid_and_root_only_actions_fail() -> None:
    limits = HOOK_OFF.model_copy(update={"processes": 8})
    stolen, box = loot(kernel_source("root_actions.py"), limits)
    uid = limits.box_uid if os.geteuid() == 0 else os.geteuid()
    assert f"unprivileged uid {uid}" in box.sealed, box.sealed
    assert f"uid {uid} euid {uid} gid {uid}" in stolen, stolen
    for action in ("setuid", "chown", "rlimit"):  # EPERM, or EINVAL where uid 0 is not even mapped
        assert (
            f"{action}: OSError" in stolen
            or f"{action}: PermissionError" in stolen
            or f"{action}: ValueError" in stolen
        )
        assert f"{action}: ok" not in stolen, stolen
    assert "threads: RuntimeError can't start new thread" in stolen, stolen
    started = max(int(line.rsplit(" ", 1)[1]) for line in stolen.splitlines() if line.startswith("threads started"))
    assert started <= limits.processes, stolen  # RLIMIT_NPROC binds: the box is not root


def test_a_home_under_the_hidden_temporary_folder_leaves_the_box_sealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = os.path.realpath(tempfile.gettempdir())
    if any(under(root, temporary) for root in needed_roots()):
        pytest.skip("this checkout lies in the temporary folder, which a box then leaves visible (docs/boxed-envs.md)")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # a home the hidden /tmp already hides: nothing to cover there
    _, box = loot(kernel_source("host_files.py", keyfile="/none", home=str(home), manifest="/none", parent="1"))
    assert "read-only filesystem" in box.sealed and "host temporary folder hidden" in box.sealed, box.sealed
