"""Pydantic models of tau2-bench's task files (``tasks.json``, ``split_tasks.json``).

Unknown keys (airline's ``annotations``, retail's ``issues``) are ignored, as upstream's Task model does.
"""

from __future__ import annotations

import textwrap
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RewardType = Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]
REWARD_TYPES: tuple[str, ...] = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
PAPER_REWARD_BASIS: tuple[RewardType, ...] = ("DB", "COMMUNICATE")
"""The original tau2-bench basis the TRACE paper scored (every task of the first release used it)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Action(_Model):
    """One gold tool call; ``compare_args`` limits the ACTION check (``None``: the predicted call's keys)."""

    action_id: str
    requestor: Literal["assistant", "user"] = "assistant"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None


class EnvAssertion(_Model):
    """A function of the domain's toolkit whose boolean result must equal ``assert_value``."""

    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    assert_value: bool = True
    message: str | None = None


class EvaluationCriteria(_Model):
    actions: list[Action] | None = None
    env_assertions: list[EnvAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardType] = Field(default_factory=lambda: list(PAPER_REWARD_BASIS))


class Description(_Model):
    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None


class StructuredUserInstructions(_Model):
    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str

    def __str__(self) -> str:
        lines = [f"Domain: {self.domain}", f"Reason for call:\n{textwrap.indent(self.reason_for_call, chr(9))}"]
        if self.known_info is not None:
            lines.append(f"Known info:\n{textwrap.indent(self.known_info, chr(9))}")
        if self.unknown_info is not None:
            lines.append(f"Unknown info:\n{textwrap.indent(self.unknown_info, chr(9))}")
        lines.append(f"Task instructions:\n{textwrap.indent(self.task_instructions, chr(9))}")
        return "\n".join(lines)


class UserScenario(_Model):
    persona: str | None = None
    instructions: StructuredUserInstructions | str

    def __str__(self) -> str:
        """The scenario text tau2 puts in the user simulator's ``<scenario>`` block."""
        lines = []
        if self.persona is not None:
            lines += ["Persona:", textwrap.indent(self.persona, "\t")]
        lines += ["Instructions:", textwrap.indent(str(self.instructions), "\t")]
        return "\n".join(lines)


class Tau2Task(_Model):
    """One tau2-bench task."""

    id: str
    description: Description | None = None
    user_scenario: UserScenario
    initial_state: dict[str, Any] | None = None
    evaluation_criteria: EvaluationCriteria | None = None

    @property
    def gold_actions(self) -> list[Action]:
        return list((self.evaluation_criteria.actions or []) if self.evaluation_criteria else [])


class TaskSplits(_Model):
    """``split_tasks.json``: task ids per split (``base`` = all)."""

    train: list[str] = Field(default_factory=list)
    test: list[str] = Field(default_factory=list)
    base: list[str] = Field(default_factory=list)


def parse_reward_basis(value: str | list[str] | tuple[str, ...] | None) -> tuple[RewardType, ...] | None:
    """``"DB,COMMUNICATE"`` or a list to a validated basis; ``None`` stays ``None`` (use the task's)."""
    if value is None:
        return None
    items = [part.strip().upper() for part in value.split(",")] if isinstance(value, str) else list(value)
    items = [item for item in items if item]
    unknown = [item for item in items if item not in REWARD_TYPES]
    if unknown or not items:
        raise ValueError(
            f"invalid reward basis {value!r}: use a comma-separated subset of {', '.join(REWARD_TYPES)}, "
            "e.g. 'DB,COMMUNICATE'"
        )
    return tuple(items)  # type: ignore[arg-type]
