"""The ``CASES.json`` format of ``trace-envs tau2-evaluate``: trajectories recorded elsewhere, in chat form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["system", "user", "assistant", "tool"]


class Case(BaseModel):
    """One trajectory to score: the task id and its messages (unknown keys ignored)."""

    model_config = ConfigDict(extra="ignore")

    task_id: str
    messages: list[dict[str, Any]]
    termination: str = Field(default="user_stop", description="tau2 termination reason; not a stop scores 0")

    @field_validator("task_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("messages")
    @classmethod
    def _check_messages(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for position, message in enumerate(messages):
            role = message.get("role")
            if role not in ("system", "user", "assistant", "tool"):
                raise ValueError(f"message {position}: role must be system, user, assistant or tool, got {role!r}")
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict) or "name" not in call:
                    raise ValueError(f"message {position}: each tool call needs 'id', 'name' and 'arguments'")
            if role == "tool" and "id" not in message:
                raise ValueError(f"message {position}: a tool message needs the 'id' of its tool call")
        return messages


class CasesFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cases: list[Case]


def load_cases(path: str | Path) -> list[Case]:
    """Parse ``{"cases": [...]}``; errors name the case and message at fault."""
    with open(path, encoding="utf-8") as handle:
        try:
            raw = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON: {exc}") from None
    return CasesFile.model_validate(raw).cases
