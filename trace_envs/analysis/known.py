"""The capabilities our registered envs train (names shared by analysis, env metadata, adapters and router
labels), with the descriptions the offline probes and discovery use: read from each capability's declaration
on its env (see :mod:`trace_envs.registry.capabilities`), never repeated here."""

from __future__ import annotations

from .models import CapabilityDef, CapabilityDictionary


def known_capabilities() -> dict[str, str]:
    """Name -> description of every declared capability that has an offline probe (the ones the ``probes``
    analyst can label; the shipped six, plus any env of one's own that declares a probe)."""
    from trace_envs.registry.capabilities import capabilities

    return {name: c.description for name, c in capabilities().items() if c.probe is not None}


def known_dictionary() -> CapabilityDictionary:
    """The known capabilities as a dictionary (what the ``probes`` analyst labels)."""
    return CapabilityDictionary(
        capabilities=[CapabilityDef(name=name, description=text) for name, text in known_capabilities().items()]
    )
