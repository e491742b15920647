"""Base + routed adapters: the frozen base model's router picks each task's adapter (or none) from the
task's opening message, and a chat policy on that adapter plays the episode. The episode's ``model`` is
the chosen client's spec (``hf:<base>@<adapter>`` or ``hf:<base>``), which is how the route is recorded.

Locally (``routed:<base>@…``) one client per adapter (and one for the base) is loaded: fine for small models.
Through one OpenAI-compatible server (``routed:openai:<base_url>#<base>@…``, e.g. ``vllm serve <base>
--enable-lora --lora-modules <capability>=<adapter> …``) every route is a request to that server, the
adapter's served name (its capability, :func:`~trace_envs.routing.vllm_lora_modules`) or ``<base>`` as the
``model``; only the router's forward pass runs here, on the base model loaded locally.
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

    def __init__(self, base_model: str, adapter_dirs: list[str], server_url: str | None = None, **model_options: Any):
        from trace_envs.llm.factory import make_chat_model
        from trace_envs.routing import Router

        self.router = Router.from_pretrained(base_model, adapter_dirs)
        self.clients: dict[str, ChatModel] = {
            BASE_ROUTE: make_chat_model(_route_config(base_model, None, server_url, model_options))
        }
        for card in self.router.cards:
            self.clients[card.name] = make_chat_model(_route_config(base_model, card, server_url, model_options))
        self.routes: dict[str, str] = {}
        """Route per opening message (a task routed once is not routed again in later trials)."""

    def route(self, opening: str) -> str:
        if opening not in self.routes:
            decision = self.router.route(opening)
            self.routes[opening] = decision.capability or BASE_ROUTE
        return self.routes[opening]

    async def aclose(self) -> None:
        """Close the running loop's HTTP connections of every route's client (the rollout loop owns them)."""
        from trace_envs.llm.client import aclose_models

        await aclose_models(*self.clients.values())

    def route_of_model(self, model_spec: str | None) -> str | None:
        """The route whose client has spec ``model_spec`` (how an episode's route is read back)."""
        return next((route for route, client in self.clients.items() if client.spec == model_spec), None)


def _route_config(base_model: str, card: Any, server_url: str | None, options: dict[str, Any]) -> ModelConfig:
    """The client of one route: base + adapter loaded here, or the server's model of that adapter's served name
    (the name ``vllm_lora_modules`` gives it; the base model's name for the base route)."""
    if server_url is None:
        adapter = card.adapter_path if card is not None else None
        return ModelConfig(provider="hf", model=base_model, adapter=adapter, **options)
    served = card.name if card is not None else base_model
    return ModelConfig(provider="openai", model=served, base_url=server_url, **options)


class RoutedPolicyFactory:
    """``job -> RoutedPolicy`` over shared :class:`RoutedModels`; its ``model`` is what the rollout loop closes."""

    def __init__(self, models: RoutedModels, spec: str, sampling: dict[str, Any] | None = None):
        self.model = models
        self.spec = spec
        self.sampling = sampling

    def __call__(self, job: Any) -> RoutedPolicy:
        return RoutedPolicy(self.model, self.spec, self.sampling)


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
