"""The LLM-played user of a tau2 task: tau2's user-simulator prompt over any chat model (a ``UserModel``).

System prompt = the guidelines file (read from the user's tau2 data, never shipped) + the task's
scenario, as tau2 builds it. The model sees the conversation with roles flipped (agent texts are
``user`` messages, its own replies ``assistant``); agent tool calls and results are not shown to it.
"""

from __future__ import annotations

from typing import Any

from trace_envs.core.templates import render_template
from trace_envs.llm_user import AGENT_GREETING, LLMUser, UserModel

GREETING = AGENT_GREETING
"""The fixed first agent message of every tau2 conversation."""


def user_system_prompt(guidelines: str, scenario: str) -> str:
    """``{guidelines}\\n\\n<scenario>\\n{scenario}\\n</scenario>``, exactly as tau2's user simulator."""
    return render_template("prompts/tau2_user_system.jinja", guidelines=guidelines, scenario=scenario)


def tau2_user(model: UserModel, scenario: str, guidelines: str, **sampling: Any) -> LLMUser:
    """The simulated customer of one tau2 task: tau2's user-simulator prompt, answering the greeting
    first; temperature 0 unless given (tau2's default)."""
    return LLMUser(
        model, user_system_prompt(guidelines, scenario), greeting=GREETING, sampling={"temperature": 0.0, **sampling}
    )
