"""Starting a box process with the kernel layers: namespaces, a sealed file system, an empty environment,
its own process group; and finding what is left of one afterwards.

Shared by the box runtime (:mod:`trace_envs.box.client`) and the synthesis sandbox.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path

from . import mounts

PLUGIN_GROUP = "trace_envs.envs"
"""The plugins' entry-point group (:data:`trace_envs.plugins.ENTRY_POINT_GROUP`), whose packages boxes import."""

ALL_NAMESPACES = (
    "user namespace",
    "network namespace",
    "pid namespace",
    "mount namespace",
    "ipc namespace",
    "uts namespace",
)
NAMESPACE_OPTIONS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("--user", "--map-root-user", "--net", "--pid", "--fork", "--mount", "--mount-proc", "--ipc", "--uts"),
        ALL_NAMESPACES,
    ),
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
    """Directories that hold our packages and the plugins' (what the child's PYTHONPATH must contain)."""
    roots = {str(Path(__file__).resolve().parents[2])}
    for point in entry_points(group=PLUGIN_GROUP):
        spec = importlib.util.find_spec(point.value.split(":")[0].split(".")[0])
        if spec is not None and spec.origin:
            roots.add(str(Path(spec.origin).resolve().parent.parent))
    return sorted(roots)


def fresh_hash_seed() -> int:
    """A random ``PYTHONHASHSEED`` for one box (a module cannot learn where it runs from set order)."""
    return secrets.randbelow(2**32 - 1) + 1


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


def hidden_folder(scratch: str) -> str | None:
    """The folder holding ``scratch`` (the host's temporary folder), which the box may see empty; None when
    something the box reads lies in it (the interpreter or a package: a checkout under /tmp)."""
    folder = os.path.dirname(os.path.realpath(scratch))
    if folder in ("", "/"):
        return None
    needed = [sys.prefix, sys.base_prefix, sys.exec_prefix, *package_roots()]
    inside = [path for path in needed if os.path.realpath(path).startswith(folder.rstrip("/") + "/")]
    return None if inside else folder


def boxed_command(
    command: Sequence[str], scratch: str, *, namespaces: bool, quota: int | None = None, tasks: int | None = None
) -> tuple[list[str], list[str]]:
    """``command`` wrapped in ``unshare`` and the mount seal (where available); returns it and the namespaces.
    ``tasks``: the most threads the box's pid namespace may hold (see :func:`mounts.limit_tasks`)."""
    prefix, isolation = namespace_prefix() if namespaces else ((), ())
    parent_namespace = mounts.mount_namespace()
    wrapped = list(command)
    if "mount namespace" in isolation and parent_namespace is not None:
        quota_options = ["--quota", str(quota)] if quota is not None else []
        hide = hidden_folder(scratch) if quota is not None else None  # a bound scratch would be bound hidden
        quota_options += ["--hide", hide] if hide is not None else []
        quota_options += ["--tasks", str(tasks)] if tasks is not None and "pid namespace" in isolation else []
        wrapped = [
            sys.executable,
            "-B",
            "-I",
            mounts.__file__,
            scratch,
            parent_namespace,
            *quota_options,
            "--",
            *wrapped,
        ]
    return [*prefix, *wrapped], list(isolation)


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
