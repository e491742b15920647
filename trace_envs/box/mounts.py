"""Inside the box's own mount namespace: mount the scratch directory (a size-limited tmpfs when a quota is
given, else a bind of the directory), remount every other mount read-only, then drop every capability and
exec the runner.

This turns "no writes outside scratch" from an audit-hook rule into one the kernel enforces, and
without capabilities the box cannot remount anything back. It runs only in a mount namespace other
than the parent's (the parent passes its own namespace id and this compares), so it can never touch
the host's mounts. Run as a script, by path, before the runner (stdlib only, so it starts fast)::

    python -I mounts.py SCRATCH PARENT_NAMESPACE [--quota BYTES] [--hide DIR] [--tasks N] [--uid UID]
        [--cover HOME]... [--keep DIR]... -- RUNNER COMMAND...

``--hide DIR`` first mounts an empty tmpfs over ``DIR`` (the host's temporary folder that holds the
scratch: its files and socket files vanish from the box, metadata included), then makes the scratch
inside it anew. ``--tasks N`` sets ``pid_max`` of the box's own pid namespace (Linux 6.14 and later):
a bound on its threads. ``--cover HOME`` mounts an empty tmpfs over a home and binds back each ``--keep DIR``
under it (the interpreter or a package that lives there): the box reaches those whatever the home's mode, and
nothing else of it, metadata included. ``--uid UID`` (the trusted process is root) makes the scratch the box's
and runs the command as ``UID`` and its gid, no supplementary groups: RLIMIT_NPROC binds a uid that is not
root.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

SBIN_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"
OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def mount_namespace() -> str | None:
    """This process's mount namespace id (``mnt:[4026531841]``), or None where there is none to read."""
    try:
        return os.readlink("/proc/self/ns/mnt")
    except OSError:
        return None


def mount_points() -> list[str]:
    """Mount points of this namespace, in mountinfo order (parents before children)."""
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        fields = [line.split() for line in handle]
    return [OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), f[4]) for f in fields if len(f) > 4]


PID_MAX_MIN = 301
"""The smallest ``pid_max`` the kernel accepts (its reserved pids, plus one)."""


def limit_tasks(tasks: int) -> int | None:
    """Set ``pid_max`` of this pid namespace (ours alone: it must be pid 1 of a fresh one); the value, or None."""
    value = max(PID_MAX_MIN, tasks)
    if os.getpid() != 1:
        return None
    try:
        with open("/proc/sys/kernel/pid_max", "w", encoding="ascii") as handle:
            handle.write(str(value))
        with open("/proc/sys/kernel/pid_max", encoding="ascii") as handle:
            return value if int(handle.read()) == value else None
    except (OSError, ValueError):
        return None


def uid_options(uid: int) -> list[str]:
    """setpriv's options that run a command as ``uid`` (and the gid of the same number), without other groups."""
    return ["--reuid", str(uid), "--regid", str(uid), "--clear-groups"]


def under(path: str, folder: str) -> bool:
    """Whether ``path`` lies inside ``folder`` (not the folder itself)."""
    return path.startswith(folder.rstrip("/") + "/")


def mount_with(mount: str, *arguments: str, fds: tuple[int, ...] = ()) -> bool:
    """Run ``mount`` with ``arguments`` (passing ``fds``); whether it succeeded."""
    done = subprocess.run([mount, *arguments], capture_output=True, check=False, env={"PATH": SBIN_PATH}, pass_fds=fds)
    return done.returncode == 0


def cover(mount: str, home: str, keep: list[str]) -> bool:
    """Mount an empty tmpfs over ``home``, then bind each folder of ``keep`` inside it back at its place (opened
    before the cover hides it); whether every mount succeeded. A home the box cannot see (under the hidden
    temporary folder) needs no cover."""
    if not os.path.isdir(home):
        return True
    inside = [path for path in keep if under(path, home) and not any(under(path, other) for other in keep)]
    handles = [os.open(path, os.O_PATH) for path in inside]
    try:
        if not mount_with(mount, "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", home):
            return False
        for path, handle in zip(inside, handles, strict=True):
            os.makedirs(path, mode=0o755, exist_ok=True)
            if not mount_with(mount, "--no-canonicalize", "--bind", f"/proc/self/fd/{handle}", path, fds=(handle,)):
                return False
        return True
    finally:
        for handle in handles:
            os.close(handle)


PROC = "/proc"
"""The box's own procfs (of its pid namespace): as root's box writes its user namespace's uid map there after the
drop, it is not made read-only, and shows only processes (``subset=pid``: no ``/proc/sys``)."""


def seal_filesystem(
    scratch: str,
    parent_namespace: str | None,
    quota: int | None = None,
    hide: str | None = None,
    *,
    owner: int | None = None,
    covers: tuple[list[str], list[str]] = ([], []),
) -> list[str]:
    """Make ``scratch`` writable (a tmpfs of ``quota`` bytes, or a bind of itself; ``owner``'s when given), cover
    the homes of ``covers`` (homes, folders kept) as :func:`cover` does, then remount every other mount read-only
    (but :data:`PROC` when ``owner`` is given).

    Returns the mount points left writable (empty: sealed). Does nothing, and returns ``["/"]``,
    unless this process is in a mount namespace of its own. ``hide``: a folder above ``scratch`` to cover
    with an empty, read-only tmpfs first.
    """
    own = mount_namespace()
    mount = shutil.which("mount", path=SBIN_PATH)
    if own is None or parent_namespace is None or own == parent_namespace or mount is None:
        return ["/"]
    scratch = os.path.realpath(scratch)
    if hide is not None:
        hide = os.path.realpath(hide)
        if not under(scratch, hide) or not mount_with(mount, "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", hide):
            return ["/"]
        os.makedirs(scratch, mode=0o700)
    ownership = f",uid={owner},gid={owner}" if owner is not None else ""
    mounted = (
        mount_with(mount, "-t", "tmpfs", "-o", f"size={quota},mode=0700{ownership}", "tmpfs", scratch)
        if quota is not None
        else mount_with(mount, "--bind", scratch, scratch)
    )
    homes, keep = covers
    if not mounted or not all(cover(mount, home, keep) for home in homes):
        return ["/"]
    if quota is None and owner is not None:
        os.chown(scratch, owner, owner)
    kept = {scratch, PROC} if owner is not None else {scratch}
    return [
        point for point in mount_points() if point not in kept and not mount_with(mount, "-o", "remount,bind,ro", point)
    ]


def processes_only(mount: str) -> bool:
    """Remount :data:`PROC` to show only the processes (of the box's pid namespace); whether it worked."""
    return mount_with(mount, "-o", "remount,subset=pid", PROC)


SEAL_VARIABLE = "TRACE_BOX_SEAL"
"""Environment variable through which this tells the runner what it did (JSON)."""


OPTIONS = ("--quota", "--hide", "--tasks", "--uid", "--cover", "--keep")
USAGE = (
    "usage: mounts.py SCRATCH PARENT_NAMESPACE [--quota B] [--hide DIR] [--tasks N] [--uid UID] [--cover HOME]... "
    "[--keep DIR]... -- COMMAND..."
)


def parse(rest: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """The options before ``--`` (each with its values, in order) and the command after it."""
    options: dict[str, list[str]] = {}
    while rest[:1] and rest[0] in OPTIONS and len(rest) > 1:
        options.setdefault(rest[0], []).append(rest[1])
        rest = rest[2:]
    separator, *command = rest or [""]
    if separator != "--" or not command:
        raise SystemExit(USAGE)
    return options, command


def main(argv: list[str]) -> None:
    """Seal, drop capabilities (setpriv; to ``--uid`` too) and exec the command after ``--``; report what was done
    in $TRACE_BOX_SEAL."""
    scratch, parent, *rest = argv
    options, command = parse(rest)
    single = {name: values[-1] for name, values in options.items()}
    quota = int(single["--quota"]) if "--quota" in single else None
    tasks = limit_tasks(int(single["--tasks"])) if "--tasks" in single else None
    owner = int(single["--uid"]) if "--uid" in single else None
    covers = (options.get("--cover", []), options.get("--keep", []))
    writable = seal_filesystem(scratch, parent, quota, single.get("--hide"), owner=owner, covers=covers)
    mount = shutil.which("mount", path=SBIN_PATH)
    proc_subset = owner is not None and not writable and mount is not None and processes_only(mount)
    os.chdir(scratch)  # the scratch now mounted there, not the folder it covers
    setpriv = shutil.which("setpriv", path=SBIN_PATH)
    environment = dict(os.environ)
    environment[SEAL_VARIABLE] = json.dumps(
        {
            "writable": writable,
            "capabilities_dropped": setpriv is not None,
            "scratch_quota": quota if not writable else None,
            "hidden": single.get("--hide") if not writable else None,
            "homes_covered": covers[0] if not writable else [],
            "proc_subset": proc_subset,
            "pid_max": tasks,
        }
    )
    if setpriv is not None:
        drop = ["--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs"]
        drop = [*uid_options(owner), *drop] if owner is not None else drop
        os.execve(setpriv, [setpriv, *drop, *command], environment)
    os.execve(command[0], command, environment)


if __name__ == "__main__":
    main(sys.argv[1:])
