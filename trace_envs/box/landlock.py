"""Landlock (Linux 5.13 and later): the box's file-system view, enforced by the kernel with no privilege.

Installed inside the box after its trusted imports and before the module's text runs, it allows reading
only the interpreter, the standard library and the trusted packages (and the system's shared libraries,
which the loader needs), and writing only the box's scratch: the host's ``/tmp``, every home, the
synthesis folder and its ``manifest.json``, and ``/proc`` cannot be opened, listed or written. Where the
kernel's Landlock ABI has them, it also refuses TCP bind/connect (ABI 4), and abstract unix sockets and
signals to processes outside the box (ABI 6).

Landlock has no maintained Python binding, and its interface is three system calls with fixed numbers
on every architecture, so this calls them directly (ctypes, stdlib only, imported only inside a box).
What it does not cover: metadata (``stat`` of a path still answers), and files opened before it runs.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Iterable

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
"""The syscall numbers (the same on every architecture: Landlock came after the tables were unified)."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The only rights a rule on a file (not a directory) may carry."""
READ_ONLY = EXECUTE | READ_FILE | READ_DIR
SCRATCH = (
    WRITE_FILE | READ_FILE | READ_DIR | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | REFER | TRUNCATE
)
"""Everything a program does with files in its own folder; no devices, fifos or socket files."""
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

SYSTEM_LIBRARIES = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache")
"""What the dynamic loader reads when an extension module is imported after Landlock (no secrets there)."""
DEVICES = {"/dev/null": READ_FILE | WRITE_FILE, "/dev/zero": READ_FILE, "/dev/urandom": READ_FILE}


class RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    """Landlock could not be set up (named in the box's report and, without a weaker box, fatal)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, disabled, or not Linux)."""
    try:
        version = _libc().syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (AttributeError, OSError):
        return 0
    return max(0, int(version))


def handled_fs(abi: int) -> int:
    """Every file-system right the kernel's ABI knows (all of them handled: what no rule allows is denied)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def ruleset(abi: int) -> tuple[RulesetAttr, int]:
    """The ruleset's attribute and its size for this ABI (older kernels refuse fields they do not know)."""
    attr = RulesetAttr(handled_fs(abi), 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net, size = NET_BIND_TCP | NET_CONNECT_TCP, 16
    if abi >= 6:
        attr.scoped, size = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL, 24
    return attr, size


def _call(number: int, *arguments: object) -> int:
    result = int(_libc().syscall(number, *arguments))
    if result < 0:
        error = ctypes.get_errno()
        raise LandlockError(error, f"landlock syscall {number}: {os.strerror(error)}")
    return result


def _allow(ruleset_fd: int, path: str, rights: int, handled: int) -> bool:
    """Allow ``rights`` under ``path`` (a missing path is skipped: not every system has /lib64)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = PathBeneathAttr(rights & handled, fd)
        _call(ADD_RULE, ruleset_fd, RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)
    return True


def restrict(read_only: Iterable[str], writable: Iterable[str], listable: Iterable[str] = ()) -> str:
    """Restrict this process (and threads it starts later) to reading ``read_only`` (plus the system's
    libraries and /dev/null, /dev/zero, /dev/urandom), listing ``listable`` (names only, no file's content) and
    writing ``writable``; returns the layer's name for the report. Raises :class:`LandlockError` where the kernel
    has no Landlock."""
    abi = abi_version()
    if abi < 1:
        raise LandlockError("Landlock is not available (Linux 5.13 or later with landlock in the lsm= list)")
    attr, size = ruleset(abi)
    handled = attr.handled_access_fs
    ruleset_fd = _call(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for path in [*read_only, *SYSTEM_LIBRARIES]:
            _allow(ruleset_fd, path, READ_ONLY, handled)
        for path in listable:
            _allow(ruleset_fd, path, READ_DIR, handled)
        for path, rights in DEVICES.items():
            _allow(ruleset_fd, path, rights, handled)
        for path in writable:
            if not _allow(ruleset_fd, path, SCRATCH, handled):
                raise LandlockError(f"the scratch folder {path} cannot be opened")
        if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        _call(RESTRICT_SELF, ruleset_fd, ctypes.c_uint32(0))
    finally:
        os.close(ruleset_fd)
    return f"landlock file-system view (ABI {abi})"
