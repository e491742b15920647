"""GEPA's reflection language model (a callable: prompt -> text) played by any of our chat models.

It adds up the calls' tokens and cost, and keeps the first model error: GEPA logs a failed reflection and
goes on, so without it a broken reflection model (no key, endpoint down) would spend the rollout budget on
minibatches that nothing learns from. The search's stopper reads :attr:`ReflectionModel.failure`.
"""

from __future__ import annotations

from typing import Any

from trace_envs.llm import ChatModel, LLMError, Usage


class ReflectionModel:
    """Answers GEPA's reflection prompts with ``model`` under ``sampling`` (e.g. temperature 0.7)."""

    def __init__(self, model: ChatModel, sampling: dict[str, Any] | None = None):
        self.model = model
        self.sampling = dict(sampling or {})
        self.calls = 0
        self.usage = Usage()
        self.failure: LLMError | None = None
        """The first error of a reflection request (after the client's retries), if any."""

    @property
    def total_cost(self) -> float:
        """USD spent so far (GEPA's reflection-cost stopper reads this name)."""
        return self.usage.cost_usd

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        try:
            response = self.model.chat(messages, None, **self.sampling)
        except LLMError as exc:
            self.failure = self.failure or exc
            raise
        self.calls += 1
        self.usage = self.usage + response.usage
        return response.content or ""
