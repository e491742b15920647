"""Sealing the filesystem: the kernel, not only the audit hook, refuses writes outside scratch; and
the host's mounts are never touched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from trace_envs.box import mounts
from trace_envs.box.launch import box_environment, namespace_prefix
from trace_envs.box.mounts import mount_namespace, seal_filesystem

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mount namespaces are Linux's")

ATTEMPT = """
import os, subprocess, sys
scratch, canary = sys.argv[1:3]
print("seal:", os.environ.get("TRACE_BOX_SEAL"))
with open(scratch + "/inside.txt", "w") as handle:
    handle.write("fine")
try:
    with open(canary, "w") as handle:
        handle.write("owned")
except OSError as exc:
    print("refused:", exc.strerror)
undo = subprocess.run(["mount", "-o", "remount,bind,rw", "/"], capture_output=True, env={"PATH": "/usr/sbin:/sbin:/usr/bin:/bin"})
print("remount rw:", undo.returncode)
"""


def test_in_the_same_namespace_nothing_is_remounted(tmp_path: Path) -> None:
    assert seal_filesystem(str(tmp_path), mount_namespace()) == ["/"]
    assert seal_filesystem(str(tmp_path), None) == ["/"]
    probe = tmp_path / "still-writable.txt"
    probe.write_text("yes", encoding="utf-8")
    assert probe.read_text(encoding="utf-8") == "yes"


def test_a_sealed_box_cannot_write_outside_scratch_nor_undo_the_seal(tmp_path: Path) -> None:
    """Without any audit hook: the kernel refuses the write, and without capabilities the remount."""
    prefix, names = namespace_prefix()
    if "mount namespace" not in names:
        pytest.skip("this machine does not allow unprivileged mount namespaces")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    canary = tmp_path / "canary.txt"
    canary.write_text("original", encoding="utf-8")
    seal = [sys.executable, "-I", mounts.__file__, str(scratch), str(mount_namespace()), "--"]
    done = subprocess.run(
        [*prefix, *seal, sys.executable, "-c", ATTEMPT, str(scratch), str(canary)],
        capture_output=True,
        text=True,
        env=box_environment(str(scratch), 0),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"writable": []' in done.stdout
    assert "refused: Read-only file system" in done.stdout
    assert canary.read_text(encoding="utf-8") == "original"
    assert (scratch / "inside.txt").read_text(encoding="utf-8") == "fine"
    if '"capabilities_dropped": true' in done.stdout:
        assert "remount rw: 0" not in done.stdout
