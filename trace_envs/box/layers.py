"""The kernel layers a box must have, and which of them this host can give: boxes fail closed.

The boundary of a box is the kernel, not the audit hook (a second layer, kept for its findings): six
namespaces, an unprivileged uid (so RLIMIT_NPROC binds), a seccomp filter and a Landlock file-system view. Where this host cannot give one of them, a
box does not start, and the error names the missing layer and the way out: ``--weaker-box`` on the command
line, ``weaker_box=True`` in the API (:attr:`~trace_envs.box.limits.BoxLimits.weaker_box`); a box started
so runs with the layers there are, and the validation report lists every layer that was in force.

Probed once per process, here (before any box starts) and again inside each box (which stops, unless it
is a weaker box, where installing a layer fails).
"""

from __future__ import annotations

from functools import lru_cache

from .launch import ALL_NAMESPACES, drops_uid, namespace_prefix

UNPRIVILEGED = "unprivileged uid"
SECCOMP = "seccomp filter"
LANDLOCK = "landlock file-system view"
REQUIRED = (*ALL_NAMESPACES, UNPRIVILEGED, SECCOMP, LANDLOCK)
"""Every layer a box needs, by the name errors use; the report's names start with these."""
WEAKER_BOX_HINT = (
    "pass --weaker-box (API: weaker_box=True) to run boxes with the layers this host has, named in the report"
)


@lru_cache(maxsize=1)
def host_layers() -> dict[str, str | None]:
    """Each required layer, with None where this host gives it, else why it cannot (probed once)."""
    from . import landlock, syscalls

    _, namespaces = namespace_prefix()
    found: dict[str, str | None] = {
        name: None if name in namespaces else "unshare refused it (or is not installed)" for name in ALL_NAMESPACES
    }
    found[UNPRIVILEGED] = (
        None if drops_uid(namespaces) else "root's boxes drop to it in a mount namespace, with setpriv"
    )
    found[SECCOMP] = None if syscalls.available() else "libseccomp is not installed (apt-get install libseccomp2)"
    found[LANDLOCK] = None if landlock.abi_version() >= 1 else "the kernel has no Landlock (Linux 5.13+, lsm=landlock)"
    return found


def missing_layers(*, namespaces: bool = True) -> list[str]:
    """The required layers a box started now would lack, each as ``name (why)``; ``namespaces=False`` (the
    limits turned them off) lacks every namespace, and as root the unprivileged uid too."""
    missing = []
    off = ALL_NAMESPACES if drops_uid(()) else (*ALL_NAMESPACES, UNPRIVILEGED)
    for name, why in host_layers().items():
        if not namespaces and name in off:
            why = "turned off in the box's limits (namespaces=False)"
        if why is not None:
            missing.append(f"{name} ({why})")
    return missing


def refusal(missing: list[str]) -> str:
    """The one line that says a box will not start here, and what to do."""
    return f"this host lacks the box's kernel layer(s): {'; '.join(missing)}; {WEAKER_BOX_HINT}"
