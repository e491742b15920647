"""The policy interface and policy spec strings (``oracle``, ``noop``, ``random``, ``flawed[:<cap>]``)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym


@runtime_checkable
class Policy(Protocol):
    """Chooses the agent's action (text) from the latest observation and info."""

    spec: str

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        """Start an episode of ``env`` (which has just been reset)."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next action."""


@runtime_checkable
class AsyncPolicy(Policy, Protocol):
    """A policy whose actions come from a model: the loop awaits ``aact`` (so episodes run
    concurrently) and falls back to ``act`` for policies without it."""

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        """The next action, without blocking the event loop."""


def make_policy(spec: str, seed: int = 0, **model_options: Any) -> Policy:
    """Build a policy from its spec string. Scripted specs: ``oracle``, ``noop``, ``random``,
    ``flawed`` (each env's own capability), ``flawed:<capability>[,<capability>…]`` (known names
    only); model specs (``anthropic:<model>``, ``openai:<base_url>#<model>``, ``hf:<path>[@<adapter>]``)
    give a :class:`ChatPolicy` with a new client (``model_options`` set :class:`~trace_envs.llm.ModelConfig`
    fields; ``sampling=`` sets the policy's sampling params). To share one client across episodes, use
    ``ChatPolicy(make_chat_model(spec))``."""
    from .scripted import check_capabilities

    kind, _, rest = spec.partition(":")
    if kind in ("anthropic", "openai", "hf") and rest:
        from trace_envs.llm.factory import make_chat_model

        from .chat_policy import ChatPolicy

        sampling = model_options.pop("sampling", None)
        return ChatPolicy(make_chat_model(spec, **model_options), sampling=sampling)
    policy = scripted_policy(spec, seed)
    if kind == "flawed" and rest:
        check_capabilities(getattr(policy, "capabilities", []))
    return policy


def scripted_policy(spec: str, seed: int = 0) -> Policy:
    """A scripted policy from its spec, capability names not checked (:func:`make_policy` checks them;
    rollouts check once, then build one policy per episode with this)."""
    from .scripted import FlawedPolicy, NoopPolicy, OraclePolicy, RandomPolicy

    kind, _, rest = spec.partition(":")
    if spec == "oracle":
        return OraclePolicy()
    if spec == "noop":
        return NoopPolicy()
    if spec == "random":
        return RandomPolicy(seed=seed)
    if spec == "flawed":
        return FlawedPolicy()
    if kind == "flawed":
        capabilities = [c.strip() for c in rest.split(",") if c.strip()]
        if not capabilities:
            raise ValueError(
                "policy spec 'flawed:' needs at least one capability, e.g. 'flawed:precondition_verification' "
                "(or plain 'flawed' for each env's own capability)"
            )
        return FlawedPolicy(capabilities)
    raise ValueError(
        f"unknown policy spec {spec!r}; expected one of: oracle, noop, random, flawed, flawed:<capability>[,…], "
        "anthropic:<model>, openai:<base_url>#<model>, hf:<path>[@<adapter>]"
    )
