"""Simulated users. ``ScriptedUser`` is deterministic: the same agent text gets the same reply.

A user played by a model (``gym.make(env_id, user_model=model)``) is built by the factory registered with
:func:`set_user_factory` (``import trace_envs`` registers :class:`trace_envs.llm_user.LLMUser`), so the
contract holds no model-played user of its own.

How it reads an agent message is stated here as data (:data:`REQUEST_CUES`, :data:`CONFIRM_CUES`) and
by :func:`read_message`; a task states the reply each reference message needs in ``UserScript.replies``
and :func:`check_replies` holds the reference to it, so no reference works by luck of wording.
"""

from __future__ import annotations

import re as _re
from typing import Any, Literal, Protocol, runtime_checkable

from .actions import STOP_TOKEN
from .task import Task, UserScript

REQUEST_CUES: tuple[str, ...] = (
    "please provide", "please share", "please give", "please tell", "please confirm", "please let me know",
    "could you", "can you", "may i have", "may i know", "let me know", "what is", "what's", "which",
)  # fmt: skip
"""Whole words that make an agent message a request the user replies to (as does a question mark)."""
CONFIRM_CUES: tuple[str, ...] = (
    "confirm", "proceed", "go ahead", "shall i", "should i", "would you like me to", "do you want me to",
    "yes/no", "is that correct", "is that right", "is this correct", "is this right",
)  # fmt: skip
"""Whole words that make a request one for confirmation (when it names none of the script's fact keys)."""


def _cues(cues: tuple[str, ...]) -> str:
    return r"\b(" + "|".join(_re.escape(cue) for cue in cues) + r")\b"


_REQUEST = _re.compile(r"\?|" + _cues(REQUEST_CUES), _re.IGNORECASE)
_CONFIRM = _re.compile(_cues(CONFIRM_CUES), _re.IGNORECASE)

Reading = Literal["answer", "confirm", "unknown", "close", "empty"]
"""How the scripted user reads a message: a question it answers from its facts, a request for confirmation,
a question it cannot answer, a statement (it closes the conversation), or nothing at all."""


def read_message(script: UserScript, text: str) -> tuple[Reading, list[str]]:
    """How the scripted user reads ``text``, and the answers of the facts it names (for ``"answer"``).

    A request (a question mark or a :data:`REQUEST_CUES` phrase) that names a fact's key gets that fact's
    answer; else one with a :data:`CONFIRM_CUES` phrase gets the confirmation; else "unknown". Any other
    non-empty text is a statement."""
    if _REQUEST.search(text):
        lowered = text.lower()
        answers = [f.answer for f in script.facts if any(k.lower() in lowered for k in f.keys)]
        if answers:
            return "answer", answers
        return ("confirm" if _CONFIRM.search(text) else "unknown"), []
    return ("close" if text.strip() else "empty"), []


def _why(reading: Reading, text: str, script: UserScript) -> str:
    if reading == "answer":
        keys = [k for f in script.facts for k in f.keys if k.lower() in text.lower()]
        return f"it names the fact key(s) {keys}, so the user answers those"
    if reading == "close":
        return f"it asks nothing: the user reads a statement (add a question mark or one of {REQUEST_CUES[:3]}…)"
    if reading == "unknown":
        return f"it asks, but names no fact key and none of the confirmation cues {CONFIRM_CUES[:4]}…"
    return "it is empty"


def check_replies(task: Task) -> str | None:
    """Why the reference's messages do not get the replies ``task.user.replies`` states (``None``: they do,
    or the script states none)."""
    stated = task.user.replies
    if not stated:
        return None
    messages = [(index, step) for index, step in enumerate(task.solution) if isinstance(step, str)]
    if len(messages) != len(stated):
        return f"user.replies states {len(stated)} replies but the reference solution has {len(messages)} messages"
    for (index, text), expected in zip(messages, stated, strict=True):
        reading, _ = read_message(task.user, text)
        if reading != expected:
            return (
                f"reference step {index} ({text[:60]!r}) should get the user's {expected!r} reply but gets "
                f"{reading!r}: {_why(reading, text, task.user)}"
            )
    return None


@runtime_checkable
class User(Protocol):
    """The user side of a conversation: an opening request, then one reply per agent message."""

    @property
    def done(self) -> bool: ...

    def start(self) -> str: ...

    def reply(self, agent_message: str) -> str: ...


class UserFactory(Protocol):
    """Builds the user of ``task`` played by ``model`` (the ``user_model`` an env was made with)."""

    def __call__(self, model: Any, task: Task, /) -> User: ...


_USER_FACTORY: list[UserFactory] = []
"""The registered factory, if any (a list, so registering needs no ``global``)."""


def set_user_factory(factory: UserFactory) -> None:
    """Register what :func:`model_user` builds users with (``import trace_envs`` registers ``LLMUser.from_task``)."""
    _USER_FACTORY[:] = [factory]


def model_user(model: Any, task: Task) -> User:
    """The user of ``task`` played by ``model``, from the registered factory (a clear error if none is)."""
    if not _USER_FACTORY:
        raise RuntimeError(
            "user_model= needs a model-played user and no user factory is registered: `import trace_envs` "
            "registers trace_envs.llm_user.LLMUser.from_task, or call trace_envs.core.user.set_user_factory(...)"
        )
    return _USER_FACTORY[0](model, task)


class ScriptedUser:
    """Answers questions from the script's facts, confirms when asked, and ends the conversation
    (with the stop token) when the agent makes a statement instead of asking something."""

    def __init__(self, script: UserScript):
        self.script = script
        self._unanswered = 0
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def start(self) -> str:
        return self.script.opening

    def reply(self, agent_message: str) -> str:
        if self._done:
            return STOP_TOKEN
        reading, answers = read_message(self.script, agent_message)
        if reading == "answer":
            return " ".join(dict.fromkeys(answers))
        if reading == "confirm":
            return self.script.confirm_reply
        if reading != "close":
            self._unanswered += 1
            if self._unanswered < self.script.max_unanswered:
                if reading == "unknown":
                    return self.script.unknown_reply
                return "Sorry, I didn't get any message. Can you help me with my request?"
        return self._close()

    def _close(self) -> str:
        self._done = True
        return f"{self.script.closing} {STOP_TOKEN}"
