"""Simulated users. ``ScriptedUser`` is deterministic: the same agent text gets the same reply."""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from .actions import STOP_TOKEN
from .task import UserScript

_REQUEST = re.compile(
    r"\?|\b(please (provide|share|give|tell|confirm|let me know)|could you|can you|may i (have|know)|"
    r"let me know|what is|what's|which)\b",
    re.IGNORECASE,
)
_CONFIRM = re.compile(
    r"\b(confirm|proceed|go ahead|shall i|should i|would you like me to|do you want me to|yes/no|"
    r"is that (correct|right)|is this (correct|right))\b",
    re.IGNORECASE,
)


@runtime_checkable
class User(Protocol):
    """The user side of a conversation: an opening request, then one reply per agent message."""

    @property
    def done(self) -> bool: ...

    def start(self) -> str: ...

    def reply(self, agent_message: str) -> str: ...


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
        text = agent_message.lower()
        if _REQUEST.search(agent_message):
            answers = [f.answer for f in self.script.facts if any(k.lower() in text for k in f.keys)]
            if answers:
                return " ".join(dict.fromkeys(answers))
            if _CONFIRM.search(agent_message):
                return self.script.confirm_reply
            self._unanswered += 1
            if self._unanswered < self.script.max_unanswered:
                return self.script.unknown_reply
        elif not agent_message.strip():
            self._unanswered += 1
            if self._unanswered < self.script.max_unanswered:
                return "Sorry, I didn't get any message. Can you help me with my request?"
        return self._end()

    def _end(self) -> str:
        self._done = True
        return f"{self.script.closing} {STOP_TOKEN}"
