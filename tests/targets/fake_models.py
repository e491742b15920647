"""Deterministic ChatModels for tau2 target tests: a scripted user and a rule-based NL judge."""

from __future__ import annotations

import json
import re
from typing import Any

from trace_envs.llm.base import ChatResponse


class ScriptedUserModel:
    """Replies with ``lines`` in order (then ``###STOP###``), recording every request."""

    spec = "fake:scripted-user"

    def __init__(self, lines: list[str]):
        self.lines = list(lines)
        self.requests: list[list[dict[str, Any]]] = []

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        self.requests.append([dict(m) for m in messages])
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return ChatResponse(content=self.lines[turn] if turn < len(self.lines) else "Thanks, bye. ###STOP###")

    async def achat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self.chat(messages, tools, **sampling)


class KeywordJudge:
    """Marks an expected outcome met iff ``keyword`` appears in the transcript part of the prompt."""

    spec = "fake:keyword-judge"

    def __init__(self, keyword: str):
        self.keyword = keyword
        self.prompts: list[str] = []

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        transcript, _, outcomes = prompt.partition("Expected outcomes:")
        items = re.findall(r"^\d+\. (.*)$", outcomes, re.MULTILINE)
        met = self.keyword in transcript
        results = [{"expectedOutcome": o, "reasoning": "keyword check", "metExpectation": met} for o in items]
        return ChatResponse(content=json.dumps({"results": results}))

    async def achat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **sampling: Any
    ) -> ChatResponse:
        return self.chat(messages, tools, **sampling)
