"""An LLM-simulated device user (ToolSandbox's user simulator role) on any ``ChatModel``."""

from __future__ import annotations

from typing import Any

from trace_envs.core import STOP_TOKEN, UserScript
from trace_envs.core.templates import render_template
from trace_envs.llm_user import LLMUser, UserModel


def device_user(model: UserModel, goal: str, script: UserScript, **sampling: Any) -> LLMUser:
    """A user for a device scenario: opens with the scenario's scripted request, then the model answers
    the agent from the goal and the facts it knows."""
    prompt = render_template(
        "prompts/device_user.jinja", goal=goal, facts=[f.answer for f in script.facts], stop_token=STOP_TOKEN
    )
    return LLMUser(model, prompt, opening=script.opening, sampling=sampling)
