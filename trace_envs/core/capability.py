"""A capability, declared once on its env: name, description, and optionally its probe, flaw rules and hint.

Analysis, probes, flawed policies and the CLI find capabilities through these declarations (collected by
:mod:`trace_envs.capabilities`), so a new capability is one new env module. The probe and the flaw rules are
objects defined with the env (or shared ones from its domain package), or ``"module:function"`` references
for an env that must not import them; a probe's signature is the :class:`Probe` protocol below, a flaw
rule's is its target kind's (tau2: :class:`trace_envs.domains.tau2_flaws.Tau2Flaw`; device: reference actions
to flawed ones).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from .episode import Episode

CAPABILITY_NAME_PATTERN = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"


class ProbeLabel(NamedTuple):
    """A probe's answer: NA (not needed), PRESENT (needed and shown) or LACKING (needed, not shown), and why."""

    label: Literal["NA", "PRESENT", "LACKING"]
    rationale: str


class LabelLike(Protocol):
    """Anything with a ``label`` (NA / PRESENT / LACKING) and a one-line ``rationale``."""

    @property
    def label(self) -> str: ...

    @property
    def rationale(self) -> str: ...


class Probe(Protocol):
    """Labels one episode offline from what the agent did (never the env id, task or outcome)."""

    def __call__(self, episode: Episode, /) -> LabelLike: ...


@cache
def resolve(reference: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names (imported on first use)."""
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"expected a reference like 'package.module:function', got {reference!r}")
    return getattr(importlib.import_module(module_name), attribute)


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

    def get_probe(self) -> Probe | None:
        """The probe, imported if it is a reference."""
        found: Probe | None = resolve(self.probe) if isinstance(self.probe, str) else self.probe
        return found

    def get_flaw(self, kind: str) -> Callable[..., Any] | None:
        """The flaw rule for target kind ``kind`` (``tau2``, ``device``), imported if it is a reference."""
        rule = self.flaws.get(kind)
        found: Callable[..., Any] | None = resolve(rule) if isinstance(rule, str) else rule
        return found
