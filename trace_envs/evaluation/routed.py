"""Base + routed adapters: the frozen base model's router picks each task's adapter (or none) from the
task's opening message, and a chat policy on that adapter plays the episode. The episode's ``model`` is
the chosen client's spec (``hf:<base>@<adapter>`` or ``hf:<base>``), which is how the route is recorded.

One client per adapter (and one for the base) is loaded: fine for small local models; serve large ones
with vLLM (``--enable-lora``) and evaluate ``openai:`` specs instead.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from trace_envs.llm.base import ChatModel, Usage
from trace_envs.llm.spec import ModelConfig
from trace_envs.rollout import ChatPolicy

from .results import BASE_ROUTE


class RoutedModels:
    """The router (frozen base model + capability cards) and one chat client per route, shared by episodes."""

    def __init__(self, base_model: str, adapter_dirs: list[str], **model_options: Any):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from trace_envs.llm.factory import make_chat_model
        from trace_envs.routing import CapabilityCard, Router

        cards = [CapabilityCard.from_adapter(d) for d in adapter_dirs]
        tokenizer = AutoTokenizer.from_pretrained(base_model)
        model = AutoModelForCausalLM.from_pretrained(base_model).eval()
        self.router = Router(model, tokenizer, cards)
        self.clients: dict[str, ChatModel] = {
            BASE_ROUTE: make_chat_model(ModelConfig(provider="hf", model=base_model, **model_options))
        }
        for card in cards:
            config = ModelConfig(provider="hf", model=base_model, adapter=card.adapter_path, **model_options)
            self.clients[card.name] = make_chat_model(config)
        self.routes: dict[str, str] = {}
        """Route per opening message (a task routed once is not routed again in later trials)."""

    def route(self, opening: str) -> str:
        if opening not in self.routes:
            decision = self.router.route(opening)
            self.routes[opening] = decision.capability or BASE_ROUTE
        return self.routes[opening]

    def route_of_model(self, model_spec: str | None) -> str | None:
        """The route whose client has spec ``model_spec`` (how an episode's route is read back)."""
        return next((route for route, client in self.clients.items() if client.spec == model_spec), None)


class RoutedPolicy:
    """One episode of a routed policy: routes at reset, then plays a :class:`ChatPolicy` on the chosen client."""

    def __init__(self, models: RoutedModels, spec: str, sampling: dict[str, Any] | None = None):
        self.models = models
        self.spec = spec
        self.sampling = sampling
        self.inner: ChatPolicy | None = None

    @property
    def model(self) -> ChatModel | None:
        return self.inner.model if self.inner is not None else None

    @property
    def usage(self) -> Usage:
        return self.inner.usage if self.inner is not None else Usage()

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        route = self.models.route(observation)
        self.inner = ChatPolicy(self.models.clients[route], self.sampling)
        self.inner.reset(env, observation, info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        assert self.inner is not None, "reset() first"
        return self.inner.act(observation, info)

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        assert self.inner is not None, "reset() first"
        return await self.inner.aact(observation, info)
