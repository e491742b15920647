"""The policy interface and :func:`make_policy`, which builds one from a policy spec string."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from trace_envs.llm.base import ChatModel, Usage

from .policy_spec import PolicySpec


@runtime_checkable
class Policy(Protocol):
    """Chooses the agent's action (text) from the latest observation and info, and says what chose it
    and what that cost (the runner records both with every episode)."""

    spec: str

    @property
    def model(self) -> ChatModel | None:
        """The model that chooses the actions (``None``: a scripted policy)."""

    @property
    def usage(self) -> Usage:
        """Tokens and cost of this episode's actions so far (zero for scripted policies)."""

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


def make_policy(spec: str | PolicySpec, seed: int = 0, **model_options: Any) -> Policy:
    """Build a policy from its spec (see :class:`PolicySpec`). Scripted specs: ``oracle``, ``noop``,
    ``random``, ``flawed`` (each env's own capability), ``flawed:<capability>[,<capability>…]`` (known
    names only, see :func:`~trace_envs.rollout.scripted.check_capabilities`); model specs (``anthropic:<model>``,
    ``openai:<base_url>#<model>``, ``hf:<path>[@<adapter>]``) give a :class:`ChatPolicy` with a new
    client (``model_options`` set :class:`~trace_envs.llm.ModelConfig` fields; ``sampling=`` sets
    the policy's sampling params; ``instructions=`` adds text to its system prompt, see
    :mod:`~trace_envs.rollout.instructions`). To share one client across episodes, use
    ``ChatPolicy(make_chat_model(spec))``."""
    sampling = model_options.pop("sampling", None)
    instructions = model_options.pop("instructions", "")
    parsed = spec if isinstance(spec, PolicySpec) else PolicySpec.parse(spec, **model_options)
    if parsed.model is not None:
        from trace_envs.llm.factory import make_chat_model

        from .chat_policy import ChatPolicy

        return ChatPolicy(make_chat_model(parsed.model, **model_options), sampling=sampling, instructions=instructions)
    if instructions:
        raise ValueError(
            f"policy {parsed.spec!r} is scripted and never reads the system prompt; instructions need a model policy"
        )
    from .scripted import check_capabilities

    check_capabilities(parsed.capabilities)
    return scripted_policy(parsed, seed)


def scripted_policy(parsed: PolicySpec, seed: int = 0) -> Policy:
    """The scripted policy of a parsed spec, capability names not checked (:func:`make_policy` checks
    them; rollouts check once, then build one policy per episode with this)."""
    from .scripted import FlawedPolicy, NoopPolicy, OraclePolicy, RandomPolicy

    if parsed.kind == "oracle":
        return OraclePolicy()
    if parsed.kind == "noop":
        return NoopPolicy()
    if parsed.kind == "random":
        return RandomPolicy(seed=seed)
    return FlawedPolicy(parsed.capabilities)
