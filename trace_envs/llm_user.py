"""``LLMUser``: a simulated user played by a chat model, for envs where the scripted user is too rigid.

The model is injected (any object with ``chat(messages, **sampling)`` answering with ``.content``,
e.g. a :class:`trace_envs.llm.ChatModel`), so no model client is imported. Roles are flipped for the
model: the agent's messages are its ``user`` turns and its own lines ``assistant`` turns, as in
tau2-bench's user simulator.

Part of the package surface, not of core: core only asks a registered factory for a model-played user
(:func:`trace_envs.core.user.set_user_factory`), and importing this module (``import trace_envs`` does)
registers :meth:`LLMUser.from_task`, so ``gym.make(env_id, user_model=model)`` plays it.
"""

from __future__ import annotations

from typing import Any, Protocol

from .core.actions import STOP_TOKEN
from .core.messages import Message
from .core.task import Task
from .core.templates import render_template
from .core.user import set_user_factory

END_TOKENS = (STOP_TOKEN, "###TRANSFER###", "###OUT-OF-SCOPE###")
"""Any of these in a user message ends the conversation (tau2-bench's user stop tokens)."""
AGENT_GREETING = "Hi! How can I help you today?"
"""The fixed first agent message of every tau2 conversation (the model user answers it first)."""


class ChatReply(Protocol):
    """What a chat model answers: at least its text."""

    @property
    def content(self) -> str | None: ...


class UserModel(Protocol):
    """A chat model that can play a user: ``chat(messages, **sampling)`` with chat-form messages."""

    def chat(self, messages: list[Message], **sampling: Any) -> ChatReply: ...


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
        model: UserModel,
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
        self.usage: Any = None
        """The sum of the replies' ``usage`` (what the model reports, e.g. ``trace_envs.llm.Usage``)."""
        self.history: list[Message] = []
        self.stop_token: str | None = None

    @classmethod
    def from_task(cls, model: UserModel, task: Task, **options: Any) -> LLMUser:
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
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.usage = usage if self.usage is None else self.usage + usage
        text = (response.content or "").strip() or "Sorry, could you repeat that?"
        self.history.append({"role": "assistant", "content": text})
        self.stop_token = next((token for token in END_TOKENS if token in text), None)
        return text


set_user_factory(LLMUser.from_task)
