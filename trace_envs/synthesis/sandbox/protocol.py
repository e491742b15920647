"""What a sandboxed run of a candidate module produced: the result of the checks (run in the validator
against the boxed env, see :mod:`trace_envs.synthesis.sandbox.process`), what the box's audit hook refused,
and how the box ended."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from trace_envs.box.limits import BoxLimits
from trace_envs.testing.suite import SuiteReport

from ..gates.steps import StepDiff

SandboxLimits = BoxLimits
"""The limits of a sandboxed run are a box's (:class:`trace_envs.box.limits.BoxLimits`)."""


BoxMode = Literal["suite", "fingerprint"]


class ModuleInfo(BaseModel):
    """What the module's env declares, as the box reported it and the first reset showed (checked by the gates)."""

    class_name: str
    capability: str
    domain: str
    tool_schemas: list[dict[str, Any]]
    env_id: str | None = None
    """The module's ``ENV_ID`` as the box read it (None: it sets none); checked against the text by the gate."""


class BoxError(BaseModel):
    """An exception of the module's code (raised in the box) that stopped a stage."""

    stage: str
    kind: str
    message: str
    line: int | None = Field(default=None, description="Line of the candidate module where it was raised, if there.")
    seed: int | None = Field(default=None, description="The seed being reset when it was raised, where one was.")
    traceback: str = ""


class FlawedEvidence(BaseModel):
    """Per seed: what the flawed solution scores and how it differs from the reference (evidence for
    the capability gate)."""

    seed: int
    declared: bool
    reward: float | None = None
    same_as_oracle: bool = False
    steps: StepDiff | None = None


class BoxResult(BaseModel):
    """What the checks found (computed in the validator, from the boxed env's answers)."""

    mode: BoxMode
    module: ModuleInfo | None = None
    error: BoxError | None = None
    suite: SuiteReport | None = None
    fingerprints: dict[int, dict[str, str]] = Field(default_factory=dict)
    flawed: list[FlawedEvidence] = Field(default_factory=list)
    generated_texts: list[tuple[str, str]] = Field(
        default_factory=list,
        description="(where, text) of what the env generated on each seed's reset (opening, task id), which the "
        "leakage check scans for the target's evaluation tasks.",
    )
    paced: str | None = Field(
        default=None,
        description="What the episodes played at a model's pace got wrong (a junk episode paid, the reference not "
        "paid), or None.",
    )
    seconds: dict[str, float] = Field(default_factory=dict)


class BlockedEvent(BaseModel):
    """An operation the audit hook refused (the module is rejected even if it caught the error)."""

    event: str
    detail: str
    stage: str = ""


class SandboxOutcome(BaseModel):
    """Everything the parent learnt from one sandboxed run."""

    run_id: str = Field(description="The run ids of its boxes (their scratch folders' names), space-separated.")
    result: BoxResult | None = None
    blocked: list[BlockedEvent] = Field(default_factory=list)
    stages: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    wall_seconds: float = 0.0
    isolation: list[str] = Field(default_factory=list)
    stdout_tail: str = ""
    stderr_tail: str = ""
    strays_killed: int = 0
    crashed: str | None = Field(default=None, description="How a box died without a limit signal (exit, protocol).")
    boxes_started: int = 0
    limits: SandboxLimits

    @property
    def last_stage(self) -> str:
        return self.stages[-1] if self.stages else "startup"
