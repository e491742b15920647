"""Scripted flawed action lists for the device target (``trace/device-v0``), built from a scenario's reference.

The device target's own capability is ``device_tool_use``, so ``flawed:<capability>`` would play the reference
everywhere there. A capability that plants a device-side deficit declares its rule on its env
(``Capability(flaws={"device": rule})``; the shipped rules are in :mod:`trace_envs.domains.device.flaws`), and
:func:`device_actions` applies the named capabilities' rules to a scenario's reference actions. Scenarios that
need none of them keep their reference actions.
"""

from __future__ import annotations

from collections.abc import Sequence

from trace_envs.core import STOP_TOKEN

KIND = "device"
"""The key of a capability's rule for device reference actions in its ``flaws``."""


def device_actions(reference: Sequence[str], capabilities: Sequence[str]) -> list[str]:
    """The reference actions with the named capabilities' device rules applied (in the order named)."""
    from trace_envs.registry.capabilities import flaw_rules

    rules = flaw_rules(KIND)
    actions = [a for a in reference if a != STOP_TOKEN]
    for rule in dict.fromkeys(rules[c] for c in capabilities if c in rules):
        actions = rule(actions)
    return actions
