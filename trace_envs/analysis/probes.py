"""Offline probes as analysis reads them: every declared probe's label on a stored episode.

A capability's probe is declared on its env (``Capability(probe=...)``; the shipped ones live with their envs in
``generated_envs/probes/``) and found through :mod:`trace_envs.registry.capabilities`. A probe reads only what the agent
did (messages, tool calls with arguments, tool results and errors) - never the env id, the policy, the task id
or the outcome - and returns NA / PRESENT / LACKING with a rationale. Probes make the pipeline runnable without
a model (analyst ``probes``) and let an analyst's labels be checked against them
(:mod:`trace_envs.analysis.agreement`).
"""

from __future__ import annotations

from trace_envs.domains.probing import Episode, LabelLike, Probe, read_messages
from trace_envs.rollout.store import EpisodeRecord

from .models import CapabilityLabel, Label


def read_episode(record: EpisodeRecord) -> Episode:
    """The probes' view of a stored episode (:func:`~trace_envs.domains.probing.read_messages`)."""
    return read_messages(record.messages)


def probe_table() -> dict[str, Probe]:
    """The probe of every registered capability that declares one, by name (each env declares its own)."""
    import trace_envs  # noqa: F401 - registers the domains whose tool kinds the probes read
    from trace_envs.registry.capabilities import probes

    return probes()


def probe_labels(record: EpisodeRecord) -> dict[str, CapabilityLabel]:
    """Every probe's label on one episode."""
    episode = read_episode(record)
    return {name: as_label(name, probe(episode)) for name, probe in probe_table().items()}


def as_label(name: str, result: LabelLike) -> CapabilityLabel:
    """A probe's answer (a ``ProbeLabel``, a ``CapabilityLabel``, …) as the capability's label."""
    if isinstance(result, CapabilityLabel) and result.capability == name:
        return result
    return CapabilityLabel(capability=name, label=Label(str(result.label)), rationale=result.rationale)
