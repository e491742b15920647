"""What the parent and the sandboxed runner exchange: the limits, the request, and the result.

The request travels on the runner's command line; events and the result come back as JSON lines on
a pipe opened before the candidate module is imported (see :mod:`trace_envs.synthesis.sandbox.process`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.testing.suite import SuiteReport

from ..gates.steps import StepDiff

GIB = 1024**3
MIB = 1024**2


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed run (rlimits in the runner, a wall clock in the parent)."""

    model_config = ConfigDict(extra="forbid")

    cpu_seconds: int = Field(default=60, ge=1, description="RLIMIT_CPU of the runner.")
    memory_bytes: int = Field(default=2 * GIB, ge=256 * MIB, description="RLIMIT_AS (address space).")
    file_size_bytes: int = Field(default=16 * MIB, ge=MIB, description="RLIMIT_FSIZE: largest file it may write.")
    open_files: int = Field(default=256, ge=32, description="RLIMIT_NOFILE.")
    processes: int = Field(
        default=16,
        ge=0,
        description="RLIMIT_NPROC headroom above the user's current task count (not enforced for root).",
    )
    wall_seconds: float = Field(default=60.0, gt=0, description="Wall-clock limit; the process group is then killed.")
    namespaces: bool = Field(default=True, description="Use Linux namespaces (unshare) when the OS allows them.")


BoxMode = Literal["suite", "fingerprint"]


class BoxRequest(BaseModel):
    """What one sandboxed run does: load ``module_path``, register it as ``env_id``, run ``mode``."""

    model_config = ConfigDict(extra="forbid")

    mode: BoxMode
    module_path: str
    env_id: str
    seeds: list[int]
    fuzz_examples: int = 50
    scratch: str
    limits: SandboxLimits
    denied_read_roots: list[str] = Field(default_factory=list)


class ModuleInfo(BaseModel):
    """What the loaded module declares, as the runner saw it (checked again in the parent)."""

    class_name: str
    capability: str
    domain: str
    tool_schemas: list[dict[str, Any]]


class BoxError(BaseModel):
    """An exception that stopped a stage inside the box."""

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
    """The runner's answer."""

    mode: BoxMode
    module: ModuleInfo | None = None
    error: BoxError | None = None
    suite: SuiteReport | None = None
    fingerprints: dict[int, dict[str, str]] = Field(default_factory=dict)
    flawed: list[FlawedEvidence] = Field(default_factory=list)
    seconds: dict[str, float] = Field(default_factory=dict)


class BlockedEvent(BaseModel):
    """An operation the audit hook refused (the module is rejected even if it caught the error)."""

    event: str
    detail: str
    stage: str = ""


class SandboxOutcome(BaseModel):
    """Everything the parent learnt from one sandboxed run."""

    run_id: str
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
    limits: SandboxLimits

    @property
    def last_stage(self) -> str:
        return self.stages[-1] if self.stages else "startup"
