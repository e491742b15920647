"""The data a capability env is made of: task, user script and verdict (and the capability, from ``capability``)."""

from __future__ import annotations

from typing import Any, Literal

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
    expected_errors: list[int] = Field(
        default_factory=list,
        description="Indexes of reference steps that must fail (e.g. the permission error an agent recovers from).",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form facts about the task for tests and people; never read by the env."
    )


class Verdict(BaseModel):
    """The verifier's decision and the components that made it."""

    reward: float = Field(ge=0.0, le=1.0)
    success: bool
    hash_match: bool
    state_hash: str
    gold_hash: str
    facts_told: dict[str, bool]
    components: dict[str, float]
