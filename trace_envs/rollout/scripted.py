"""Scripted policies: the reference solution, its flawed variants, doing nothing, random text."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Sequence
from typing import Any, cast

import gymnasium as gym

from trace_envs.core import STOP_TOKEN, EnvProtocol, contract_gaps
from trace_envs.llm.base import ChatModel, Usage


def _contract_env(env: gym.Env[Any, Any]) -> EnvProtocol:
    """The env under the wrappers, read through the env contract (a clear error naming what another env lacks)."""
    inner = env.unwrapped
    gaps = contract_gaps(inner)
    if gaps:
        raise TypeError(
            f"scripted policies need a trace_envs env, got {type(inner).__name__} (it lacks {', '.join(gaps)})"
        )
    return cast(EnvProtocol, inner)


class ScriptedPolicy:
    """A policy that no model plays: ``model`` is ``None`` and ``usage`` zero (the ``Policy`` protocol's
    members; subclass it for a policy of your own)."""

    spec = "scripted"
    model: ChatModel | None = None

    @property
    def usage(self) -> Usage:
        return Usage()


class ScriptPolicy(ScriptedPolicy):
    """Plays a fixed list of actions, then ends the conversation with the stop token."""

    spec = "script"

    def __init__(self, actions: Sequence[str] = ()):
        self._queue = list(actions)

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        self._queue = list(self.actions_for(env))

    def actions_for(self, env: gym.Env[Any, Any]) -> Sequence[str]:
        return self._queue

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._queue.pop(0) if self._queue else STOP_TOKEN


class OraclePolicy(ScriptPolicy):
    """The env's reference solution, ``oracle_actions()`` (a tau2 target's is its task's gold actions and a
    message with the facts to tell)."""

    spec = "oracle"

    def actions_for(self, env: gym.Env[Any, Any]) -> Sequence[str]:
        return _contract_env(env).oracle_actions()


def known_capabilities() -> list[str]:
    """The names ``flawed:<capability>`` accepts, sorted: the capabilities the registered envs declare
    (see :mod:`trace_envs.registry.capabilities`; a user's own env counts once its module is imported)."""
    from trace_envs.registry.capabilities import capabilities

    return sorted(capabilities())


def check_capabilities(capabilities: Sequence[str]) -> None:
    """Raise ``ValueError`` listing the valid names when one of ``capabilities`` is not known (a typo
    would otherwise play the reference solution everywhere); none named (plain ``flawed``) is valid."""
    if not capabilities:
        return
    known = known_capabilities()
    unknown = [c for c in capabilities if c not in known]
    if unknown:
        raise ValueError(
            f"unknown capability {', '.join(map(repr, unknown))} in policy spec 'flawed:{','.join(capabilities)}'; "
            f"known capabilities: {', '.join(known)} (plain 'flawed' plays each env's own capability)"
        )


class FlawedPolicy(ScriptPolicy):
    """``flawed_actions()`` on envs whose capability is named (no names, spec ``flawed``: every env's own
    capability); the reference solution elsewhere. On a target env its target's flaw rules apply the named
    deficits to its reference (see ``Target.flawed``: tau2's gold actions, device's reference actions)."""

    def __init__(self, capabilities: Sequence[str] = ()):
        super().__init__()
        self.capabilities = list(capabilities)
        self.spec = "flawed:" + ",".join(self.capabilities) if self.capabilities else "flawed"

    def actions_for(self, env: gym.Env[Any, Any]) -> Sequence[str]:
        from trace_envs.registry.targets import target_of_env

        target = target_of_env(env.unwrapped)
        if target is not None:  # the deficits applied to the target's reference (None: no rule applies)
            flawed = target.flawed(env.unwrapped, self.capabilities or None)
            if flawed is not None:
                return flawed
        inner = _contract_env(env)
        own = inner.capability
        if own is not None and (not self.capabilities or own.name in self.capabilities):
            flawed = inner.flawed_actions()
            if flawed is not None:
                return flawed
        return inner.oracle_actions()


class NoopPolicy(ScriptedPolicy):
    """Sends an empty message every turn."""

    spec = "noop"

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        return None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return ""


class RandomPolicy(ScriptedPolicy):
    """Seeded random actions: random text, or a random tool with made-up arguments."""

    spec = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.tools: list[dict[str, Any]] = []

    def reset(self, env: gym.Env[Any, Any], observation: str, info: dict[str, Any]) -> None:
        self.tools = list(info.get("tools", []))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.tools and self.rng.random() < 0.5:
            function = self.rng.choice(self.tools)["function"]
            properties = function.get("parameters", {}).get("properties", {})
            arguments = {name: self._value(schema) for name, schema in properties.items()}
            return json.dumps({"name": function["name"], "arguments": arguments})
        return self._text()

    def _text(self) -> str:
        return "".join(self.rng.choice(string.ascii_letters + " ") for _ in range(self.rng.randint(0, 40)))

    def _value(self, schema: dict[str, Any]) -> Any:
        kind = schema.get("type")
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        if kind == "integer":
            return self.rng.randint(-5, 100)
        if kind == "number":
            return round(self.rng.uniform(-5, 100), 2)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "array":
            return [self._value(schema.get("items", {})) for _ in range(self.rng.randint(0, 2))]
        return self._text()


def play_actions(
    env: gym.Env[Any, Any] | EnvProtocol, actions: Sequence[str], seed: int | None = None
) -> tuple[float, dict[str, Any]]:
    """Reset ``env`` and play ``actions`` (then the stop token) until the episode ends.

    Returns the final reward and the final step's info.
    """
    env.reset(seed=seed)
    queue = list(actions)
    while True:
        action = queue.pop(0) if queue else STOP_TOKEN
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return float(reward), info
