"""The data a capability env is made of: task, user script and verdict (and the capability, from ``capability``)."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from .capability import Capability
from .tools import ToolCall

__all__ = ["Capability", "Reply", "Task", "UserFact", "UserScript", "Verdict"]


class UserFact(BaseModel):
    """Something the simulated user knows and says when the agent asks about any of ``keys``."""

    keys: list[str] = Field(min_length=1, description="Phrases that, in a request, make the user say the answer.")
    answer: str = Field(description="What the user says.")


Reply = Literal["answer", "confirm", "close"]
"""The reply a reference message needs from the scripted user: a fact's answer, the confirmation, or the closing."""


class UserScript(BaseModel):
    """What the deterministic user says: opening request, answers, confirmation and closing, and the reply
    each message of the reference solution needs (see ``trace_envs.core.user`` for how the user reads text)."""

    opening: str = Field(min_length=1, description="The user's first message: the request.")
    facts: list[UserFact] = Field(default_factory=list, description="What the user answers when asked.")
    confirm_reply: str = Field(default="Yes, please go ahead.", description="The reply to a request to confirm.")
    unknown_reply: str = Field(
        default="Sorry, I don't have that information.", description="The reply to a question it cannot answer."
    )
    closing: str = Field(
        default="Thank you, that's all I needed.", description="The reply to a statement; it ends the conversation."
    )
    max_unanswered: int = Field(
        default=3, ge=1, description="Unanswerable or empty messages after which the user ends the conversation."
    )
    replies: list[Reply] = Field(
        default_factory=list,
        description="The reply each message of the reference solution needs, in order ('answer', 'confirm', "
        "'close'); reset() raises if the user would read one otherwise. Plan fills it; empty: not stated.",
    )


class Task(BaseModel):
    """One seeded task: initial state, what the user wants and knows, the reference solution (and the
    flawed one), and the facts the agent must tell the user. Solutions are lists of tool calls and messages."""

    task_id: str = Field(default="", description='Its id; "" means "<capability>-<seed>".')
    initial_state: dict[str, Any] = Field(description="The domain state the episode starts from, as JSON data.")
    goal: str = Field(description="What the user wants, in one line (for people and LLM-played users).")
    user: UserScript = Field(description="What the scripted user says and knows.")
    solution: list[ToolCall | str] = Field(
        description="The reference solution: replayed for the gold state; its messages tell the required facts."
    )
    flawed_solution: list[ToolCall | str] | None = Field(
        default=None, description="The reference with the capability skipped (None: the env has no flawed solution)."
    )
    required_facts: list[str] = Field(
        default_factory=list, description="Text the agent must tell the user (tau2's substring match)."
    )
    forbidden_facts: list[str] = Field(
        default_factory=list,
        description="Text the agent must not tell anywhere in the episode: an outcome other than the true one "
        "(another status, a wrong amount). Telling one fails the task, so a message listing every outcome cannot pay.",
    )
    required_reads: list[ToolCall] = Field(
        default_factory=list,
        description="Tool calls (name and arguments) that must succeed before the required facts count: the "
        "records a decision rests on, so that a canned answer without the lookup cannot pass.",
    )
    reads_before: list[str] = Field(
        default_factory=list,
        description="Tool names that change the state: a required read counts only when made before the first "
        "successful call of any of them (a precondition is checked before acting; a lookup after it checks nothing).",
    )
    expected_errors: list[int] = Field(
        default_factory=list,
        description="Indexes of reference steps that must fail (e.g. the permission error an agent recovers from).",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form facts about the task for tests and people; never read by the env."
    )


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
    facts_contradicted: dict[str, bool] = Field(default_factory=dict)
    """Each fact the agent must not tell (``Task.forbidden_facts``), and whether it told it anyway."""
    reads_done: dict[str, bool] = Field(default_factory=dict)
    """For each required read (as its action string), whether the agent made it successfully."""
    components: dict[str, float]
    """The named parts of the reward (e.g. ``db`` and ``communicate``)."""
    details: DetailsT | None = None
