"""The box's seccomp-bpf filter, built with libseccomp (Debian's ``libseccomp2``) through ctypes.

Installed inside the box after its trusted imports and before the module's text runs, it refuses, with an
error the module sees (``EPERM``; ``ENOSYS`` for ``clone3``, so that glibc falls back to ``clone`` for
threads), every system call an env has no use for and an attacker does:

- new processes: ``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD`` (threads stay allowed), ``clone3``;
  so RLIMIT_AS, which is per process, bounds the whole box;
- programs: ``execve``, ``execveat``;
- sockets of any family (the box talks to its parent over pipes it already holds);
- other processes and namespaces: ``ptrace``, ``process_vm_*``, ``pidfd_*``, ``unshare``, ``setns``,
  the mount calls, ``pivot_root``, ``chroot``;
- System V and POSIX IPC; and kernel interfaces that reach around the filter or the kernel's other
  layers (``io_uring``, ``bpf``, ``perf_event_open``, ``userfaultfd``, keyrings, modules, handles);
- memory outside the address-space limit: ``memfd_create`` and ``memfd_secret`` (a memfd's pages are shmem,
  which RLIMIT_AS does not count; SysV shm is refused above, and every tmpfs but the scratch, whose quota
  bounds it, is read-only);
- the host's own counters: ``sysinfo`` (uptime, load, free memory and the host's task count are not
  namespaced; glibc's ``sysconf`` of page counts then answers -1, ``os.cpu_count`` reads another source);
- watching files: ``inotify_*`` and ``fanotify_*`` (Landlock does not mediate a watch: a box could learn the
  names of files made in a host folder it cannot open).

Every other call is allowed: a deny list, since the calls an env needs are those of CPython and of the
libraries it imports (numpy, pydantic...), which no fixed allow list can know. Calls of another
architecture's table (32-bit ``int 0x80``, x32) kill the box: libseccomp's default for a foreign arch.

libseccomp does the architecture's syscall numbers and the BPF program; its official Python binding is
not on PyPI, and ``pyseccomp`` (a ctypes shim of the same five functions) is unmaintained since 2021, so
this calls the five functions itself. Imported only inside a box.
"""

from __future__ import annotations

import ctypes
import errno
from functools import lru_cache

SONAME = "libseccomp.so.2"
"""By soname (``ctypes.util.find_library`` would run ``ldconfig`` and ``gcc``)."""
ACT_ALLOW = 0x7FFF0000
CMP_MASKED_EQ = 7
CLONE_THREAD = 0x00010000

DENIED = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "socket",
    "socketpair",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "kcmp",
    "unshare",
    "setns",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "open_by_handle_at",
    "name_to_handle_at",
    "acct",
    "swapon",
    "swapoff",
    "reboot",
    "quotactl",
    "memfd_create",
    "memfd_secret",
    "sysinfo",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    "fanotify_init",
    "fanotify_mark",
)
"""Refused with EPERM, whatever their arguments."""


class ArgCmp(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``: compare argument ``arg`` with ``op`` and two data."""

    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class SeccompError(OSError):
    """The filter could not be built or loaded (named in the box's report and, without a weaker box, fatal)."""


def act_errno(number: int) -> int:
    """libseccomp's ``SCMP_ACT_ERRNO(number)``."""
    return 0x00050000 | (number & 0xFFFF)


@lru_cache(maxsize=1)
def library() -> ctypes.CDLL | None:
    """libseccomp, or None where it is not installed."""
    try:
        lib = ctypes.CDLL(SONAME, use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(ArgCmp),
    ]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def available() -> bool:
    """Whether the filter can be built here (libseccomp found; the kernel's support is checked on load)."""
    return library() is not None


def _rule(lib: ctypes.CDLL, context: int, action: int, name: str, *compare: ArgCmp) -> None:
    """Add one rule; a call this architecture does not have is skipped."""
    number = lib.seccomp_syscall_resolve_name(name.encode("ascii"))
    if number < 0:
        return
    array = (ArgCmp * len(compare))(*compare) if compare else None
    result = lib.seccomp_rule_add_array(ctypes.c_void_p(context), action, number, len(compare), array)
    if result != 0:
        raise SeccompError(-result, f"seccomp rule for {name}: error {-result}")


def install() -> str:
    """Load the filter into this process (its threads started later inherit it); returns the layer's name for
    the report. Raises :class:`SeccompError` where libseccomp or the kernel's seccomp is missing."""
    lib = library()
    if lib is None:
        raise SeccompError("libseccomp is not installed (Debian: apt-get install libseccomp2)")
    context = lib.seccomp_init(ACT_ALLOW)
    if not context:
        raise SeccompError("seccomp_init failed")
    try:
        for name in DENIED:
            _rule(lib, context, act_errno(errno.EPERM), name)
        _rule(lib, context, act_errno(errno.ENOSYS), "clone3")
        not_a_thread = ArgCmp(0, CMP_MASKED_EQ, CLONE_THREAD, 0)  # x86_64, arm64...: the flags are argument 0
        _rule(lib, context, act_errno(errno.EPERM), "clone", not_a_thread)
        result = lib.seccomp_load(ctypes.c_void_p(context))
        if result != 0:
            raise SeccompError(-result, f"seccomp_load failed: error {-result} (a kernel without seccomp?)")
    finally:
        lib.seccomp_release(ctypes.c_void_p(context))
    return (
        "seccomp filter (no processes, programs, sockets, IPC, memfds, host counters, file watches, ptrace, "
        "namespaces or mounts)"
    )
