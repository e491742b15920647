"""Run a candidate module's checks in a sandboxed subprocess; nothing of the module runs in this process.

The child is ``python -m trace_envs.synthesis.sandbox._box_runner`` started:

- in new user, network, PID and mount namespaces (``unshare``) when the OS allows it, falling back
  to fewer (or none) and saying which in the outcome's ``isolation``;
- in a fresh scratch directory as its working directory and ``TMPDIR``;
- with an environment of ``PATH``, ``PYTHONPATH`` (our packages), ``LANG`` and thread settings
  only: no API keys, no ``HOME``;
- in its own process group, killed whole at the wall-clock limit (and any leftover found by its run
  id afterwards);
- in its own mount namespace, with every mount but scratch read-only and no capabilities left
  (:mod:`trace_envs.synthesis.sandbox.mounts` does this, then execs the runner);
- with rlimits (CPU, address space, file size, open files, processes) and the audit hook of
  :mod:`trace_envs.synthesis.sandbox.audit`, both set by the runner before the module is imported.

Refusals, stage changes and the result come back as JSON lines on a pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from . import mounts
from .mounts import mount_namespace
from .protocol import BlockedEvent, BoxMode, BoxRequest, BoxResult, SandboxLimits, SandboxOutcome

RUNNER_MODULE = "trace_envs.synthesis.sandbox._box_runner"
CHANNEL_LIMIT = 4 * 1024 * 1024
"""Bytes of the report channel kept; the rest is drained and dropped (a module cannot fill our memory)."""
TAIL = 4000

NAMESPACE_OPTIONS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("--user", "--map-root-user", "--net", "--pid", "--fork", "--mount", "--mount-proc"),
        ("user namespace", "network namespace", "pid namespace", "mount namespace"),
    ),
    (("--user", "--map-root-user", "--net"), ("user namespace", "network namespace")),
    (("--net",), ("network namespace",)),
)
"""unshare options, strongest first; the first that works on this machine is used."""


@lru_cache(maxsize=1)
def namespace_prefix() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``unshare`` command prefix this machine allows, and the namespaces it gives (probed once)."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return (), ()
    for options, names in NAMESPACE_OPTIONS:
        try:
            probe = subprocess.run(
                [unshare, *options, "true"], capture_output=True, timeout=10, check=False, env={"PATH": os.defpath}
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return (unshare, *options), names
    return (), ()


def denied_read_roots() -> list[str]:
    """Home directories the module may not read: ours, ``/root`` and ``/home``."""
    roots = {"/root", "/home"}
    with contextlib.suppress(RuntimeError, KeyError):
        roots.add(str(Path.home()))
    return sorted(roots)


def package_roots() -> list[str]:
    """Directories that hold our packages (what the child's PYTHONPATH must contain)."""
    import trace_envs
    from trace_envs.plugins import plugin_packages

    roots = {str(Path(p.__file__ or "").resolve().parent.parent) for p in (trace_envs, *plugin_packages())}
    return sorted(roots)


def box_environment(scratch: str, hash_seed: int) -> dict[str, str]:
    """The child's whole environment: nothing inherited, so no keys, tokens or HOME."""
    return {
        "PATH": os.defpath,
        "PYTHONPATH": os.pathsep.join(package_roots()),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": str(hash_seed),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "TMPDIR": scratch,
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def run_in_sandbox(
    source: str,
    *,
    mode: BoxMode,
    seeds: list[int],
    env_id: str,
    fuzz_examples: int = 50,
    limits: SandboxLimits | None = None,
    hash_seed: int = 0,
) -> SandboxOutcome:
    """Run ``mode`` on the module ``source`` in a fresh sandbox and return what came back."""
    limits = limits or SandboxLimits()
    scratch = tempfile.mkdtemp(prefix="trace-box-")
    private = tempfile.mkdtemp(prefix="trace-box-out-")  # stdout/stderr files: not in scratch
    run_id = Path(scratch).name
    try:
        module_path = Path(scratch) / "candidate_module.py"
        module_path.write_text(source, encoding="utf-8")
        request = BoxRequest(
            mode=mode,
            module_path=str(module_path),
            env_id=env_id,
            seeds=seeds,
            fuzz_examples=fuzz_examples,
            scratch=scratch,
            limits=limits,
            denied_read_roots=denied_read_roots(),
        )
        return _launch(request, run_id, private, hash_seed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(private, ignore_errors=True)


def _launch(request: BoxRequest, run_id: str, private: str, hash_seed: int) -> SandboxOutcome:
    limits = request.limits
    prefix, isolation = namespace_prefix() if limits.namespaces else ((), ())
    read_fd, write_fd = os.pipe()
    command = [sys.executable, "-B", "-m", RUNNER_MODULE, str(write_fd), request.model_dump_json()]
    parent_namespace = mount_namespace()
    if "mount namespace" in isolation and parent_namespace is not None:
        seal = [sys.executable, "-B", "-I", mounts.__file__, request.scratch, parent_namespace, "--"]
        command = [*seal, *command]
    command = [*prefix, *command]
    reader = _ChannelReader(read_fd)
    start = time.monotonic()
    with open(Path(private) / "stdout", "wb") as out, open(Path(private) / "stderr", "wb") as err:
        try:
            process = subprocess.Popen(
                command,
                cwd=request.scratch,
                env=box_environment(request.scratch, hash_seed),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        finally:
            os.close(write_fd)
        reader.start()
        timed_out = False
        try:
            process.wait(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # the whole group, whether it ended or not
        process.wait()
        strays = kill_strays(run_id)
        reader.join(timeout=5)
    wall = time.monotonic() - start
    code = process.returncode
    signal_name = reader.signals[0] if reader.signals else None  # the runner's own report of a limit signal
    if signal_name is None and code is not None and code < 0:
        signal_name = signal.Signals(-code).name
    isolation_used = [*isolation, *reader.isolation, "rlimits", "audit hook", "scratch directory", "empty environment"]
    return SandboxOutcome(
        run_id=run_id,
        result=reader.result,
        blocked=reader.blocked,
        stages=reader.stages,
        exit_code=code,
        signal=None if timed_out else signal_name,
        timed_out=timed_out,
        wall_seconds=wall,
        isolation=isolation_used,
        stdout_tail=_tail(Path(private) / "stdout"),
        stderr_tail=_tail(Path(private) / "stderr"),
        strays_killed=strays,
        limits=limits,
    )


def kill_strays(run_id: str) -> int:
    """SIGKILL any process still running with ``run_id`` on its command line (ones that left the group)."""
    killed = 0
    me = os.getpid()
    for pid in box_processes(run_id):
        if pid != me:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


def box_processes(run_id: str) -> list[int]:
    """Pids of live processes whose command line contains ``run_id`` (the scratch directory's name)."""
    found = []
    marker = run_id.encode()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry))
    return found


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - TAIL))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


class _ChannelReader(threading.Thread):
    """Reads JSON lines from the report channel while the child runs (so a full pipe never blocks it)."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self.fd = fd
        self.blocked: list[BlockedEvent] = []
        self.stages: list[str] = []
        self.signals: list[str] = []
        self.isolation: list[str] = []
        self.result: BoxResult | None = None
        self._kept = 0

    def run(self) -> None:
        buffer = b""
        with open(self.fd, "rb", buffering=0) as stream:
            while chunk := stream.read(65536):
                if self._kept >= CHANNEL_LIMIT:
                    continue
                self._kept += len(chunk)
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._handle(line)
        if buffer and self._kept < CHANNEL_LIMIT:
            self._handle(buffer)

    def _handle(self, line: bytes) -> None:
        try:
            message: dict[str, Any] = json.loads(line)
        except ValueError:
            return
        kind = message.get("type") if isinstance(message, dict) else None
        try:
            if kind == "blocked":
                self.blocked.append(BlockedEvent.model_validate({k: v for k, v in message.items() if k != "type"}))
            elif kind == "stage" and isinstance(message.get("stage"), str):
                self.stages.append(message["stage"])
            elif kind == "signal" and isinstance(message.get("signal"), str):
                self.signals.append(message["signal"])
            elif kind == "isolation" and isinstance(message.get("name"), str) and "import" not in self.stages:
                self.isolation.append(message["name"])  # only before the module runs: it cannot add claims
            elif kind == "result" and self.result is None:
                self.result = BoxResult.model_validate(message.get("result"))
        except ValidationError:
            return
