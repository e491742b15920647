"""Inside the box's own mount namespace: mount the scratch directory (a size-limited tmpfs when a quota is
given, else a bind of the directory), remount every other mount read-only, then drop every capability and
exec the runner.

This turns "no writes outside scratch" from an audit-hook rule into one the kernel enforces, and
without capabilities the box cannot remount anything back. It runs only in a mount namespace other
than the parent's (the parent passes its own namespace id and this compares), so it can never touch
the host's mounts. Run as a script, by path, before the runner (stdlib only, so it starts fast)::

    python -I mounts.py SCRATCH PARENT_NAMESPACE [--quota BYTES] -- RUNNER COMMAND...
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


def seal_filesystem(scratch: str, parent_namespace: str | None, quota: int | None = None) -> list[str]:
    """Make ``scratch`` writable (a tmpfs of ``quota`` bytes, or a bind of itself), then remount every other
    mount read-only.

    Returns the mount points left writable (empty: sealed). Does nothing, and returns ``["/"]``,
    unless this process is in a mount namespace of its own.
    """
    own = mount_namespace()
    mount = shutil.which("mount", path=SBIN_PATH)
    if own is None or parent_namespace is None or own == parent_namespace or mount is None:
        return ["/"]
    scratch = os.path.realpath(scratch)

    def run(*arguments: str) -> bool:
        done = subprocess.run([mount, *arguments], capture_output=True, check=False, env={"PATH": SBIN_PATH})
        return done.returncode == 0

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
    quota = None
    if rest[:1] == ["--quota"] and len(rest) > 1:
        quota, rest = int(rest[1]), rest[2:]
    separator, *command = rest or [""]
    if separator != "--" or not command:
        raise SystemExit("usage: mounts.py SCRATCH PARENT_NAMESPACE [--quota BYTES] -- COMMAND...")
    writable = seal_filesystem(scratch, parent, quota)
    setpriv = shutil.which("setpriv", path=SBIN_PATH)
    environment = dict(os.environ)
    environment[SEAL_VARIABLE] = json.dumps(
        {
            "writable": writable,
            "capabilities_dropped": setpriv is not None,
            "scratch_quota": quota if not writable else None,
        }
    )
    if setpriv is not None:
        drop = ["--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs"]
        os.execve(setpriv, [setpriv, *drop, *command], environment)
    os.execve(command[0], command, environment)


if __name__ == "__main__":
    main(sys.argv[1:])
