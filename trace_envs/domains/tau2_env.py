"""Shared base of the tau2-side capability envs: the ``variant`` knob picks the airline or retail domain.

Used by the structured-data, tool-precision, multi-step and precondition envs in ``generated_envs``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import CapabilityEnv, Domain
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.retail import RETAIL

TAU2_DOMAINS: dict[str, Domain[Any]] = {"airline": AIRLINE, "retail": RETAIL}


class Tau2Knobs(BaseModel):
    """Knobs every tau2-side env has: which domain its tasks use."""

    model_config = ConfigDict(extra="forbid")

    variant: Literal["airline", "retail"] = Field(default="airline", description="Target domain of the tasks.")


Tau2KnobsT = TypeVar("Tau2KnobsT", bound=Tau2Knobs)


class Tau2VariantEnv(CapabilityEnv[Tau2KnobsT]):
    """A capability env over a tau2 domain chosen by its ``variant`` knob, whose policy is the domain's
    own plus ``policy_addendum`` (rules this env's tasks rely on)."""

    policy_addendum: ClassVar[str] = ""

    def choose_domain(self) -> Domain[Any]:
        return TAU2_DOMAINS[self.knobs.variant]

    @property
    def policy_text(self) -> str:
        return self.domain.policy + self.policy_addendum
