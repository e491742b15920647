"""Inside the box's own mount namespace: remount every mount read-only except the scratch directory.

This turns "no writes outside scratch" from an audit-hook rule into one the kernel enforces. It runs
only when the process is in a mount namespace other than the parent's (the parent passes its own
namespace id and the runner compares), so it can never touch the host's mounts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

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


def seal_filesystem(scratch: str, parent_namespace: str | None) -> list[str]:
    """Bind ``scratch`` writable, then remount every other mount read-only.

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

    if not run("--bind", scratch, scratch):
        return ["/"]
    return [point for point in mount_points() if point != scratch and not run("-o", "remount,bind,ro", point)]
