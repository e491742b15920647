"""The limits of a box process, and applying them inside it (soft = hard rlimits, set before any untrusted code)."""

from __future__ import annotations

import os
import resource

from pydantic import BaseModel, ConfigDict, Field

WEAKER_BOX_VARIABLE = "TRACE_ENVS_WEAKER_BOX"
"""Set to 1 (by ``--weaker-box``), every box of this process and its workers may start without a missing layer."""


def weaker_box_default() -> bool:
    """Whether ``--weaker-box`` (or ``$TRACE_ENVS_WEAKER_BOX=1``) is in force: the default of :attr:`BoxLimits.weaker_box`."""
    return os.environ.get(WEAKER_BOX_VARIABLE) == "1"


GIB = 1024**3
MIB = 1024**2


class BoxLimits(BaseModel):
    """Resource limits of one box process: rlimits set inside it, a wall clock per call kept by the parent.

    The same limits hold wherever a box runs (validation, calibration, training, evaluation), so a module
    learns nothing from them about where it is."""

    model_config = ConfigDict(extra="forbid")

    cpu_seconds: int = Field(default=60, ge=1, description="RLIMIT_CPU of the box process (its whole life).")
    memory_bytes: int = Field(default=2 * GIB, ge=256 * MIB, description="RLIMIT_AS (address space).")
    file_size_bytes: int = Field(default=16 * MIB, ge=MIB, description="RLIMIT_FSIZE: largest file it may write.")
    output_bytes: int = Field(
        default=16 * MIB,
        ge=64 * 1024,
        description="What the parent reads of the box's stdout, and of its stderr (pipes it drains, keeping only "
        "their ends; nothing goes to disk): past it the stream is closed, and the box's next write to it fails.",
    )
    scratch_bytes: int = Field(
        default=64 * MIB,
        ge=MIB,
        description="Size of the box's scratch (a tmpfs of this size where a mount namespace is available).",
    )
    open_files: int = Field(default=256, ge=32, description="RLIMIT_NOFILE.")
    processes: int = Field(
        default=16,
        ge=0,
        description="RLIMIT_NPROC headroom (threads) above the box's own task count; it binds, since the box runs "
        "as an unprivileged uid.",
    )
    box_uid: int = Field(
        default=65534,
        ge=1,
        description="The uid and gid a box runs as when the trusted process is root (65534: nobody), in a user "
        "namespace of its own; an ordinary user's box keeps that user's uid.",
    )
    wall_seconds: float = Field(
        default=60.0,
        gt=0,
        description="Wall-clock limit of the box's start (the module's import and its env's constructor); the box "
        "is then killed.",
    )
    step_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Wall-clock limit of every other call (a reset, a step, a reading of the verdict...): a slower "
        "box is killed, and the call is a box error (an env's call takes milliseconds).",
    )
    episode_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Wall-clock limit of the box's time in one episode (its reset and every call until the next "
        "reset; the parent's user model's time is not the box's): a box that is slow on every step is stopped.",
    )
    reply_bytes: int = Field(
        default=4 * MIB,
        ge=64 * 1024,
        description="Largest reply the parent reads from a box (one JSON line); a larger one is a box error, read no "
        "further, so a box cannot make the trusted process hold more than this.",
    )
    spin_seconds: float = Field(
        default=0.001,
        ge=0.0,
        le=0.01,
        description="How long each side polls for the other's next message before it sleeps: calls that come fast "
        "then find both processes on a running CPU with warm caches (a sleep and wake-up costs more than the step "
        "itself on many machines); 0 always sleeps.",
    )
    user_turns_per_call: int = Field(
        default=4,
        ge=1,
        description="Most user lines a box may ask the parent's model for during one reset or step (one is usual).",
    )
    namespaces: bool = Field(
        default=True, description="Use Linux namespaces (unshare); off, the box lacks them (a weaker box)."
    )
    weaker_box: bool = Field(
        default_factory=weaker_box_default,
        description=(
            "Start boxes even where a kernel layer (a namespace, the seccomp filter, Landlock) is missing on this "
            "host; the report names the layers in force. Off (the default, unless $TRACE_ENVS_WEAKER_BOX=1): such a "
            "box does not start, and the error names the missing layer."
        ),
    )
    audit_hook: bool = Field(
        default=True,
        description=(
            "Install the audit hook (a second layer, for findings: the kernel layers are the boundary). Off only to "
            "show that the kernel layers hold alone (the red-team tests); the report then omits it."
        ),
    )
    tasks: int = Field(
        default=301,
        ge=301,
        description=(
            "pid_max of the box's own pid namespace (Linux 6.14+): at most this many threads, root included; the "
            "kernel's minimum is 301. No process can start anyway (the seccomp filter), so RLIMIT_AS bounds the box."
        ),
    )
    resets_per_box: int = Field(
        default=1024,
        ge=1,
        description=(
            "A pooled box serves this many resets, then is replaced: the validation suite (50 seeds) keeps its first "
            "box for more resets than that, so a box never lives longer in use than in validation, and counting "
            "resets tells a module nothing."
        ),
    )


def apply_limits(limits: BoxLimits) -> None:
    """Set soft = hard rlimits (they cannot be raised again without privilege)."""
    cpu = limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files,) * 2)
    tasks = user_task_count()
    if tasks is not None:
        nproc = tasks + limits.processes
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def user_task_count() -> int | None:
    """Threads owned by this real uid (RLIMIT_NPROC counts them all, not only ours); None if unknown."""
    uid, count = os.getuid(), 0
    try:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as handle:
                    fields = dict(line.split(":", 1) for line in handle if ":" in line)
            except OSError:
                continue
            if int(fields.get("Uid", "-1").split()[0]) == uid:
                count += int(fields.get("Threads", "1").strip())
    except OSError:
        return None
    return count
