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
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path

from . import mounts
from .protocol import PLUGIN_GROUP

ALL_NAMESPACES = (
    "user namespace",
    "network namespace",
    "pid namespace",
    "mount namespace",
    "ipc namespace",
    "uts namespace",
)
TIME_NAMESPACE = "time namespace"
"""Optional (Linux 5.6+): the box's monotonic and boot-time clocks start near zero (:func:`clock_offsets`), so they
no longer tell it how long the host has been up."""
OTHER_NAMESPACES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("--net", "--pid", "--fork", "--mount", "--mount-proc", "--ipc", "--uts", "--time"),
        (*ALL_NAMESPACES[1:], TIME_NAMESPACE),
    ),
    (
        ("--net", "--pid", "--fork", "--mount", "--mount-proc", "--ipc", "--uts"),
        ALL_NAMESPACES[1:],
    ),
    (
        ("--net", "--pid", "--fork", "--mount", "--mount-proc"),
        ("network namespace", "pid namespace", "mount namespace"),
    ),
    (("--net",), ("network namespace",)),
)
"""unshare options for every namespace but the user's, strongest first; the first that works here is used."""
USER_NAMESPACE = ("--user", "--map-current-user")
"""A user namespace in which the box keeps its uid: an ordinary user's own, or :data:`BOX_UID` for root's boxes."""
BOX_UID = 65534
"""The uid (and gid) a box runs as when the trusted process is root: nobody, so RLIMIT_NPROC binds."""


def succeeds(command: list[str]) -> bool:
    """Whether ``command`` runs and exits 0 (a probe: no output kept, 10 s at most)."""
    try:
        done = subprocess.run(command, capture_output=True, timeout=10, check=False, env={"PATH": os.defpath})
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def namespace_options() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """unshare options to try, strongest first. An ordinary user's box starts in its user namespace (keeping the
    capabilities there until the seal drops them); root's gets one after the seal drops it to BOX_UID."""
    if os.geteuid() == 0:
        return list(OTHER_NAMESPACES)
    user = (*USER_NAMESPACE, "--keep-caps")
    return [((*user, *options), ("user namespace", *names)) for options, names in OTHER_NAMESPACES]


@lru_cache(maxsize=1)
def namespace_prefix() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``unshare`` command prefix this machine allows, and the namespaces it gives (probed once)."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return (), ()
    for options, names in namespace_options():
        offsets = clock_offsets() if TIME_NAMESPACE in names else ()  # as a box gets them: a host may refuse them
        if succeeds([unshare, *options, *offsets, "true"]):
            nested = ("user namespace",) if "mount namespace" in names and dropped_user_namespace() else ()
            return (unshare, *options), (*nested, *names)
    return (), ()


def clock_offsets() -> tuple[str, ...]:
    """``unshare`` options that start a new time namespace's monotonic and boot-time clocks at zero (to the
    second) now: the host's uptime, taken off."""
    monotonic = int(time.clock_gettime(time.CLOCK_MONOTONIC))
    boottime = int(time.clock_gettime(time.CLOCK_BOOTTIME))
    return ("--monotonic", str(-monotonic), "--boottime", str(-boottime))


@lru_cache(maxsize=4)
def dropped_user_namespace(uid: int = BOX_UID) -> tuple[str, ...]:
    """As root: the prefix that gives a box its user namespace once the seal has dropped it to ``uid``
    (empty when not root, or where that uid may not make one: the box is then a weaker one)."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv", path=mounts.SBIN_PATH)
    if os.geteuid() != 0 or unshare is None or setpriv is None:
        return ()
    nested = (unshare, *USER_NAMESPACE)
    return nested if succeeds([setpriv, *mounts.uid_options(uid), *nested, "true"]) else ()


def drops_uid(isolation: Sequence[str]) -> bool:
    """Whether a box with these namespaces runs as an unprivileged uid: always for an ordinary user; for root,
    where the seal (in a mount namespace) can drop it with setpriv."""
    setpriv = shutil.which("setpriv", path=mounts.SBIN_PATH)
    return os.geteuid() != 0 or ("mount namespace" in isolation and setpriv is not None)


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


def needed_roots() -> list[str]:
    """The folders a box reads its code from (the interpreter's prefixes, our packages and the plugins'), resolved."""
    return sorted({os.path.realpath(path) for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, *package_roots())})


SHARED_TEMPORARY = "/tmp"
"""Where a box's scratch goes when the temporary folder lies under one the box's uid cannot pass through."""


def scratch_parent() -> str | None:
    """The folder to make a box's scratch in: None (the temporary folder) when every folder above it lets others
    pass, else :data:`SHARED_TEMPORARY`. A box drops to an unprivileged uid, which cannot reach a scratch under a
    0700 folder (pytest's ``/tmp/pytest-of-root``, a ``$TMPDIR`` in a home); the scratch is only a mount point
    there, covered by the box's own tmpfs."""
    folder = Path(tempfile.gettempdir()).resolve()
    passable = all(os.stat(part).st_mode & stat.S_IXOTH for part in (folder, *folder.parents))
    return None if passable or not os.path.isdir(SHARED_TEMPORARY) else SHARED_TEMPORARY


def hidden_folder(scratch: str, needed: list[str]) -> str | None:
    """The folder holding ``scratch`` (the host's temporary folder), which the box may see empty; None when
    something the box reads (``needed``: :func:`needed_roots`) lies in it (a checkout under /tmp)."""
    folder = os.path.dirname(os.path.realpath(scratch))
    if folder in ("", "/"):
        return None
    return None if any(mounts.under(path, folder) for path in needed) else folder


def home_covers(scratch: str, needed: list[str]) -> list[str]:
    """The seal's options that cover each home (``--cover``) and bind back what the box reads there
    (``--keep``, of ``needed``); a home that holds the scratch, or lies in what the box reads, is left as it is."""
    scratch = os.path.realpath(scratch)
    homes = [os.path.realpath(home) for home in denied_read_roots() if os.path.isdir(home)]
    homes = [
        home
        for home in homes
        if not mounts.under(scratch, home)
        and not any(path == home or mounts.under(home, path) for path in needed)
        and not any(mounts.under(home, other) for other in homes)
    ]
    options = [option for home in homes for option in ("--cover", home)]
    kept = [path for path in needed if any(mounts.under(path, home) for home in homes)]
    return options + [option for path in kept for option in ("--keep", path)]


def boxed_command(
    command: Sequence[str],
    scratch: str,
    *,
    namespaces: bool,
    quota: int | None = None,
    tasks: int | None = None,
    uid: int = BOX_UID,
) -> tuple[list[str], list[str]]:
    """``command`` wrapped in ``unshare`` and the mount seal (where available); returns it and the namespaces.
    ``tasks``: the most threads the box's pid namespace may hold (see :func:`mounts.limit_tasks`); ``uid``: the
    one the seal drops a root-started box to, before its user namespace."""
    prefix, isolation = namespace_prefix() if namespaces else ((), ())
    if TIME_NAMESPACE in isolation:
        prefix = (*prefix, *clock_offsets())
    parent_namespace = mounts.mount_namespace()
    wrapped = list(command)
    if "mount namespace" in isolation and parent_namespace is not None:
        needed = needed_roots()  # read once: the plugins' entry points take milliseconds to list
        quota_options = ["--quota", str(quota)] if quota is not None else []
        hide = hidden_folder(scratch, needed) if quota is not None else None  # a bound scratch would be bound hidden
        quota_options += ["--hide", hide] if hide is not None else []
        quota_options += ["--tasks", str(tasks)] if tasks is not None and "pid namespace" in isolation else []
        quota_options += home_covers(scratch, needed)
        if os.geteuid() == 0:
            quota_options += ["--uid", str(uid)]
            wrapped = [*dropped_user_namespace(uid), *wrapped]
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
