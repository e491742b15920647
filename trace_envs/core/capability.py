"""A capability, declared once on its env: name, description, and optionally its probe, flaw rules and hint.

Analysis, probes, flawed policies and the CLI find capabilities through these declarations (collected by
:mod:`trace_envs.registry.capabilities`), so a new capability is one new env module. The probe and the flaw rules are
objects defined with the env (or shared ones from its domain package), or ``"module:function"`` references
for an env that must not import them (resolved by :mod:`trace_envs.registry.capabilities`, never here); a probe's
signature is :class:`trace_envs.domains.probing.Probe`, a flaw rule's is its target kind's (tau2:
:class:`trace_envs.domains.tau2_flaws.Tau2Flaw`; device: reference actions to flawed ones).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CAPABILITY_NAME_PATTERN = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"


class Capability(BaseModel):
    """A capability an agent may lack: a fixed snake_case name, a one-paragraph description (what the analyst
    labels and the router shows), and optionally its offline probe and its flaw rule per target kind."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=CAPABILITY_NAME_PATTERN, description="snake_case, the same everywhere it appears.")
    description: str = Field(min_length=1, description="What it is and what lacking it looks like.")
    probe: str | Callable[..., Any] | None = Field(
        default=None, description="Its Probe, or a 'module:function' reference to one (None: no offline probe)."
    )
    flaws: dict[str, str | Callable[..., Any]] = Field(
        default_factory=dict,
        description="Its deficit rule per target kind ('tau2': a Tau2Flaw on a task's gold calls, 'device': "
        "reference actions -> flawed ones), or 'module:function' references (none: no target deficit).",
    )
    hint: str | None = Field(
        default=None,
        min_length=1,
        description="Expert guidance that hint-prompt rollouts see in their system prompt during training: how to "
        "approach the capability, never which tool to call or with what (see trace_envs.training.hints).",
    )
