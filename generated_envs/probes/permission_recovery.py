"""The probe of permission-error recovery: a call a setting blocked must later succeed."""

from __future__ import annotations

import re

from trace_envs.domains.probing import Episode, ProbeLabel

_PERMISSION = re.compile(
    r"permission|not enabled|is disabled|low battery mode|is turned off|airplane mode", re.IGNORECASE
)
"""Errors caused by a device setting: a PermissionError, or a service that is off (ToolSandbox's
``ConnectionError: Cellular service is not enabled``)."""


def probe_permission(episode: Episode) -> ProbeLabel:
    """After a permission-style tool error (a setting blocks the call), the same tool must later succeed
    (the blocking setting changed, the call retried)."""
    for call in episode.calls:
        if call.error and _PERMISSION.search(call.result or ""):
            retried = any(c.name == call.name and not c.error for c in episode.calls[call.index + 1 :])
            if retried:
                return ProbeLabel("PRESENT", f"{call.name} hit a permission error, was unblocked and retried")
            return ProbeLabel("LACKING", f"{call.name} hit a permission error that was never resolved")
    return ProbeLabel("NA", "no permission error occurred")
