"""The data a capability env is made of: capability, task, user script and verdict."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .tools import ToolCall

CAPABILITY_NAME_PATTERN = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"


class Capability(BaseModel):
    """A capability an agent may lack: a fixed snake_case name and a one-paragraph description."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=CAPABILITY_NAME_PATTERN)
    description: str = Field(min_length=1)


class UserFact(BaseModel):
    """Something the simulated user knows and says when the agent asks about any of ``keys``."""

    keys: list[str] = Field(min_length=1)
    answer: str


class UserScript(BaseModel):
    """What the deterministic user says: opening request, answers, confirmation and closing."""

    opening: str = Field(min_length=1)
    facts: list[UserFact] = Field(default_factory=list)
    confirm_reply: str = "Yes, please go ahead."
    unknown_reply: str = "Sorry, I don't have that information."
    closing: str = "Thank you, that's all I needed."
    max_unanswered: int = Field(default=3, ge=1)


class Task(BaseModel):
    """One seeded task: initial state, what the user wants and knows, the reference solution and
    the facts the agent must tell the user. The solution is a list of tool calls and messages."""

    task_id: str
    initial_state: dict[str, Any]
    goal: str
    user: UserScript
    solution: list[ToolCall | str]
    required_facts: list[str] = Field(default_factory=list)
    required_reads: list[ToolCall] = Field(default_factory=list)
    """Tool calls (name and arguments) that must succeed before the required facts are told: the records
    a decision rests on, so that a canned answer without the lookup cannot pass."""
    expected_errors: list[int] = Field(default_factory=list)
    """Indexes of solution steps that must fail (e.g. the permission error an agent recovers from)."""
    metadata: dict[str, Any] = Field(default_factory=dict)


DetailsT = TypeVar("DetailsT")


class Verdict(BaseModel, Generic[DetailsT]):
    """The verifier's decision, one shape for every env (``info["verdict"]`` when an episode ends).

    ``details`` holds what only one kind of env knows, as its own typed model (``Verdict[Tau2Evaluation]``
    for the tau2 targets, ``Verdict[EvaluationResult]`` for the device target, ``None`` for capability
    envs); ``Verdict.model_validate(info["verdict"])`` reads any env's verdict with the details as data."""

    reward: float = Field(ge=0.0, le=1.0)
    success: bool
    hash_match: bool | None
    """Whether the final state equals the gold state (``None``: the env's scoring compares no states)."""
    state_hash: str
    gold_hash: str | None
    facts_told: dict[str, bool]
    """Each fact the agent had to tell the user, and whether it did."""
    reads_done: dict[str, bool] = Field(default_factory=dict)
    """For each required read (as its action string), whether the agent made it successfully."""
    components: dict[str, float]
    """The named parts of the reward (e.g. ``db`` and ``communicate``)."""
    details: DetailsT | None = None
