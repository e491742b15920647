"""The program that runs inside the sandbox: ``python -m trace_envs.synthesis.sandbox._box_runner FD REQUEST``.

Order matters: (in a mount namespace of its own, :mod:`trace_envs.synthesis.sandbox.mounts` has already
remounted everything but scratch read-only and dropped every capability) rlimits first, then every
trusted import, then the audit hook, and only then the candidate module (loaded from its path into a fresh module namespace). It registers the module's
``CapabilityEnv`` subclass under a temporary id and runs trace_envs.testing's property checks, or
only fingerprints seeds (the second process of the determinism check). Stage changes, refusals and
the result go to the report channel ``FD``; the process then exits with ``os._exit`` so that no
``atexit`` handler of the module runs.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .audit import AuditReporter


def apply_limits(limits: dict[str, Any]) -> None:
    """Set soft = hard rlimits before anything else runs (they cannot be raised again without privilege)."""
    cpu = int(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_size_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2)
    tasks = _user_task_count()
    if tasks is not None:
        nproc = tasks + int(limits["processes"])
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def _user_task_count() -> int | None:
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


def report_limit_signals(reporter: AuditReporter) -> None:
    """Say on the channel when a soft limit is hit (the exit status through ``unshare --fork`` loses it).

    SIGXCPU ends the run at once; after SIGXFSZ the write that hit the limit fails with EFBIG.
    """

    def on_signal(signum: int, frame: FrameType | None) -> None:
        reporter.send({"type": "signal", "signal": signal.Signals(signum).name, "stage": reporter.stage})
        if signum == signal.SIGXCPU:
            os._exit(128 + signum)

    signal.signal(signal.SIGXCPU, on_signal)
    signal.signal(signal.SIGXFSZ, on_signal)


def report_seal(reporter: AuditReporter) -> None:
    """Pass on what :mod:`trace_envs.synthesis.sandbox.mounts` did before exec'ing us (read-only mounts, no capabilities)."""
    from .mounts import SEAL_VARIABLE

    try:
        seal = json.loads(os.environ.pop(SEAL_VARIABLE, "null")) or {}
    except ValueError:
        return
    writable = seal.get("writable", ["/"])
    if not writable:
        reporter.send({"type": "isolation", "name": "read-only filesystem"})
    elif writable != ["/"]:
        reporter.send({"type": "isolation", "name": f"read-only filesystem except {', '.join(writable)}"})
    if seal.get("capabilities_dropped"):
        reporter.send({"type": "isolation", "name": "no capabilities"})


def main(argv: list[str]) -> None:
    channel_fd, raw = int(argv[0]), json.loads(argv[1])
    apply_limits(raw["limits"])

    from .audit import AuditPolicy, AuditReporter, install

    reporter = AuditReporter(channel_fd)
    report_limit_signals(reporter)
    reporter.set_stage("startup")
    from . import box_checks  # every trusted import happens here, before the hook
    from .protocol import BoxRequest

    request = BoxRequest.model_validate(raw)
    report_seal(reporter)
    install(AuditPolicy(request.scratch, request.denied_read_roots, box_checks.trusted_roots()), reporter)
    result = box_checks.run(request, reporter.set_stage)
    reporter.send({"type": "result", "result": result.model_dump(mode="json")})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
