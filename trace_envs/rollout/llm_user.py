"""``LLMUser``: a simulated user played by a chat model (core's ``User`` protocol), for target envs
where the scripted user is too rigid. Roles are flipped for the model: the agent's messages are its
``user`` turns and its own lines are ``assistant`` turns, as in tau2-bench's user simulator."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from trace_envs.core import STOP_TOKEN, CapabilityEnv, Task
from trace_envs.core.templates import render_template
from trace_envs.llm.base import ChatModel, Usage

END_TOKENS = (STOP_TOKEN, "###TRANSFER###", "###OUT-OF-SCOPE###")
AGENT_GREETING = "Hi! How can I help you today?"


def scenario_from_task(task: Task) -> str:
    """The user's instructions for a capability task: the goal, the opening request, what they know."""
    lines = [f"Your goal: {task.goal}", f"You start the conversation with a request like: {task.user.opening}"]
    if task.user.facts:
        lines.append("What you know (share it only when asked):")
        lines += [f"- about {' / '.join(fact.keys)}: {fact.answer}" for fact in task.user.facts]
    return "\n".join(lines)


class LLMUser:
    """A user simulated by ``model`` from a scenario text (rendered into
    ``templates/prompts/llm_user_system.jinja``). ``done`` once a reply holds an end token."""

    def __init__(
        self,
        model: ChatModel,
        scenario: str,
        *,
        sampling: dict[str, Any] | None = None,
        greeting: str = AGENT_GREETING,
        template: str = "prompts/llm_user_system.jinja",
    ):
        self.model = model
        self.scenario = scenario
        self.sampling = dict(sampling or {})
        self.greeting = greeting
        self.usage = Usage()
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": render_template(template, scenario=scenario, stop_token=STOP_TOKEN)}
        ]
        self._done = False

    @classmethod
    def from_task(cls, model: ChatModel, task: Task, **options: Any) -> LLMUser:
        return cls(model, scenario_from_task(task), **options)

    @property
    def done(self) -> bool:
        return self._done

    def start(self) -> str:
        """The user's opening message (its answer to the agent's greeting)."""
        return self._say(self.greeting)

    def reply(self, agent_message: str) -> str:
        if self._done:
            return STOP_TOKEN
        return self._say(agent_message or "(the agent sent an empty message)")

    def _say(self, agent_text: str) -> str:
        self.messages.append({"role": "user", "content": agent_text})
        response = self.model.chat(self.messages, None, **self.sampling)
        self.usage = self.usage + response.usage
        text = (response.content or "").strip() or "Sorry, could you repeat that?"
        self.messages.append({"role": "assistant", "content": text})
        if any(token in text for token in END_TOKENS):
            self._done = True
        return text


def use_llm_user(env: gym.Env[Any, Any], model: ChatModel, **options: Any) -> gym.Env[Any, Any]:
    """Make a :class:`CapabilityEnv` (or any env with a ``make_user(task)`` hook) simulate its user
    with ``model`` from the next reset on. Returns ``env``."""
    inner = env.unwrapped
    if not hasattr(inner, "make_user"):
        raise TypeError(f"{type(inner).__name__} has no make_user(task) hook, so its user cannot be replaced")
    inner.make_user = lambda task: LLMUser.from_task(model, task, **options)
    inner.llm_user_model = model  # type: ignore[attr-defined]
    return env


def episode_user(env: gym.Env[Any, Any]) -> Any:
    """The current user object of an env (``None`` if it has none)."""
    inner = env.unwrapped
    return inner.user if isinstance(inner, CapabilityEnv) else getattr(inner, "user", None)
