"""Inside the box's own mount namespace: mount the scratch directory (a size-limited tmpfs when a quota is
given, else a bind of the directory), remount every other mount read-only, then drop every capability and
exec the runner.

This turns "no writes outside scratch" from an audit-hook rule into one the kernel enforces, and
without capabilities the box cannot remount anything back. It runs only in a mount namespace other
than the parent's (the parent passes its own namespace id and this compares), so it can never touch
the host's mounts. Run as a script, by path, before the runner (stdlib only, so it starts fast)::

    python -I mounts.py SCRATCH PARENT_NAMESPACE [--quota BYTES] [--hide DIR] [--tasks N] -- RUNNER COMMAND...

``--hide DIR`` first mounts an empty tmpfs over ``DIR`` (the host's temporary folder that holds the
scratch: its files and socket files vanish from the box, metadata included), then makes the scratch
inside it anew. ``--tasks N`` sets ``pid_max`` of the box's own pid namespace (Linux 6.14 and later):
a bound on its threads that holds for root too, where RLIMIT_NPROC does not.
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


def seal_filesystem(
    scratch: str, parent_namespace: str | None, quota: int | None = None, hide: str | None = None
) -> list[str]:
    """Make ``scratch`` writable (a tmpfs of ``quota`` bytes, or a bind of itself), then remount every other
    mount read-only.

    Returns the mount points left writable (empty: sealed). Does nothing, and returns ``["/"]``,
    unless this process is in a mount namespace of its own. ``hide``: a folder above ``scratch`` to cover
    with an empty, read-only tmpfs first.
    """
    own = mount_namespace()
    mount = shutil.which("mount", path=SBIN_PATH)
    if own is None or parent_namespace is None or own == parent_namespace or mount is None:
        return ["/"]
    scratch = os.path.realpath(scratch)

    def run(*arguments: str) -> bool:
        done = subprocess.run([mount, *arguments], capture_output=True, check=False, env={"PATH": SBIN_PATH})
        return done.returncode == 0

    if hide is not None:
        hide = os.path.realpath(hide)
        if not scratch.startswith(hide.rstrip("/") + "/") or not run(
            "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", hide
        ):
            return ["/"]
        os.makedirs(scratch, mode=0o700)
    mounted = (
        run("-t", "tmpfs", "-o", f"size={quota},mode=0700", "tmpfs", scratch)
        if quota is not None
        else run("--bind", scratch, scratch)
    )
    if not mounted:
        return ["/"]
    return [point for point in mount_points() if point != scratch and not run("-o", "remount,bind,ro", point)]


SEAL_VARIABLE = "TRACE_BOX_SEAL"
"""Environment variable through which this tells the runner what it did (JSON)."""


def main(argv: list[str]) -> None:
    """Seal, drop capabilities (setpriv) and exec the command after ``--``; report both in $TRACE_BOX_SEAL."""
    scratch, parent, *rest = argv
    options: dict[str, str] = {}
    while rest[:1] and rest[0] in ("--quota", "--hide", "--tasks") and len(rest) > 1:
        options[rest[0]], rest = rest[1], rest[2:]
    separator, *command = rest or [""]
    if separator != "--" or not command:
        raise SystemExit("usage: mounts.py SCRATCH PARENT_NAMESPACE [--quota B] [--hide DIR] [--tasks N] -- COMMAND...")
    quota = int(options["--quota"]) if "--quota" in options else None
    tasks = limit_tasks(int(options["--tasks"])) if "--tasks" in options else None
    writable = seal_filesystem(scratch, parent, quota, options.get("--hide"))
    os.chdir(scratch)  # the scratch now mounted there, not the folder it covers
    setpriv = shutil.which("setpriv", path=SBIN_PATH)
    environment = dict(os.environ)
    environment[SEAL_VARIABLE] = json.dumps(
        {
            "writable": writable,
            "capabilities_dropped": setpriv is not None,
            "scratch_quota": quota if not writable else None,
            "hidden": options.get("--hide") if not writable else None,
            "pid_max": tasks,
        }
    )
    if setpriv is not None:
        drop = ["--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs"]
        os.execve(setpriv, [setpriv, *drop, *command], environment)
    os.execve(command[0], command, environment)


if __name__ == "__main__":
    main(sys.argv[1:])
