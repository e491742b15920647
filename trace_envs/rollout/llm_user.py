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
"""Any of these in a user message ends the conversation (tau2-bench's user stop tokens)."""
AGENT_GREETING = "Hi! How can I help you today?"


def scenario_from_task(task: Task) -> str:
    """The user's instructions for a capability task: the goal, the opening request, what they know."""
    lines = [f"Your goal: {task.goal}", f"You start the conversation with a request like: {task.user.opening}"]
    if task.user.facts:
        lines.append("What you know (share it only when asked):")
        lines += [f"- about {' / '.join(fact.keys)}: {fact.answer}" for fact in task.user.facts]
    return "\n".join(lines)


class LLMUser:
    """A user played by ``model`` under ``system_prompt``, with roles flipped (the agent's messages are
    the model's ``user`` turns). ``done`` once a reply holds an end token. With ``opening`` the first
    message is that scripted text; otherwise the model answers ``greeting`` (tau2's protocol).

    One class for every simulated user of ours: capability tasks (:meth:`from_task`), tau2 tasks
    (tau2's user-simulator prompt) and device scenarios (their goal and facts)."""

    def __init__(
        self,
        model: ChatModel,
        system_prompt: str,
        *,
        opening: str | None = None,
        greeting: str = AGENT_GREETING,
        sampling: dict[str, Any] | None = None,
    ):
        self.model = model
        self.system_prompt = system_prompt
        self.opening = opening
        self.greeting = greeting
        self.sampling = dict(sampling or {})
        self.usage = Usage()
        self.history: list[dict[str, Any]] = []
        self.stop_token: str | None = None

    @classmethod
    def from_task(cls, model: ChatModel, task: Task, **options: Any) -> LLMUser:
        """A user for a capability task: its goal, opening request and facts as the scenario."""
        prompt = render_template(
            "prompts/llm_user_system.jinja", scenario=scenario_from_task(task), stop_token=STOP_TOKEN
        )
        return cls(model, prompt, **options)

    @property
    def done(self) -> bool:
        return self.stop_token is not None

    def start(self) -> str:
        """The user's opening message: the scripted opening, or the model's answer to the greeting."""
        if self.opening is not None:
            self.history.append({"role": "assistant", "content": self.opening})
            return self.opening
        return self._say(self.greeting)

    def reply(self, agent_message: str) -> str:
        if self.done:
            return STOP_TOKEN
        return self._say(agent_message or "(the agent sent an empty message)")

    def _say(self, agent_text: str) -> str:
        self.history.append({"role": "user", "content": agent_text})
        response = self.model.chat([{"role": "system", "content": self.system_prompt}, *self.history], **self.sampling)
        self.usage = self.usage + response.usage
        text = (response.content or "").strip() or "Sorry, could you repeat that?"
        self.history.append({"role": "assistant", "content": text})
        self.stop_token = next((token for token in END_TOKENS if token in text), None)
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
