"""What a consumer reads of any env of ours, as structural Protocols rather than a class tree.

A capability env (:class:`~trace_envs.core.CapabilityEnv`), a boxed env (a proxy whose episodes run in a box),
the device target and the tau2 target all satisfy :class:`EnvProtocol`; the ones with a hash verifier (every
kind but the tau2 target) also satisfy :class:`VerifiableEnv`, which the property suite reads. Which kind an
env is, is recorded where it is registered (``trace_envs.registry.env_kind``), not found by ``isinstance``.
"""

from __future__ import annotations

from inspect import getattr_static
from typing import Any, Protocol, SupportsFloat

from gymnasium.spaces import Space

from .capability import Capability
from .domain import Domain
from .messages import Message
from .task import Task, Verdict
from .tools import Toolset


class EnvProtocol(Protocol):
    """The env contract every consumer (rollouts, the TRL bridge, scripted policies, the CLI) reads."""

    @property
    def capability(self) -> Capability | None:
        """What the env trains (``None``: a target env whose tasks declare no capability, e.g. tau2's)."""

    @property
    def toolset(self) -> Toolset:
        """Every tool the env can offer (the TRL bridge builds one method per tool from it)."""

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The schemas of the tools offered in the current episode."""

    @property
    def max_turns(self) -> int:
        """Agent actions before the episode is truncated."""

    @property
    def current_task(self) -> Any:
        """The task of the current episode (a ``RuntimeError`` before the first ``reset()``)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode (Gymnasium's ``reset``)."""

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play one agent action (Gymnasium's ``step``)."""

    def close(self) -> None:
        """Release what the env holds (Gymnasium's ``close``)."""

    def cut(self, reason: str = "max_steps") -> dict[str, Any]:
        """End the episode from outside and score it as at the env's turn limit (``{}`` if it already ended)."""

    def verify(self) -> Verdict[Any]:
        """The verdict of the current episode."""

    def oracle_actions(self) -> list[str]:
        """The reference solution of the current task, as action strings."""

    def flawed_actions(self) -> list[str] | None:
        """The current task's flawed solution as action strings (``None``: it has none)."""


CONTRACT_MEMBERS = (
    "capability",
    "toolset",
    "tool_schemas",
    "max_turns",
    "current_task",
    "reset",
    "step",
    "close",
    "cut",
    "verify",
    "oracle_actions",
    "flawed_actions",
)
"""The members of :class:`EnvProtocol`, which :func:`contract_gaps` looks for."""


class VerifiableEnv(EnvProtocol, Protocol):
    """An env with a hash verifier over its own domain state: what the property suite reads besides the contract."""

    @property
    def capability(self) -> Capability:
        """What the env trains (every verifiable env declares one)."""

    @property
    def domain(self) -> Domain[Any]:
        """The domain whose tools and state the env plays."""

    @property
    def observation_space(self) -> Space[str]:
        """The text space every observation lies in."""

    @property
    def messages(self) -> list[Message]:
        """The transcript of the current episode."""

    @property
    def state(self) -> Any:
        """The domain state of the current episode."""

    @property
    def current_task(self) -> Task:
        """The task of the current episode (a ``RuntimeError`` before the first ``reset()``)."""

    def gold_hash(self) -> str:
        """The hash of the initial state with the reference solution replayed."""


def declares_capability(env: object) -> bool:
    """Whether an env (or its class) declares a capability, read structurally: a capability env, run here or
    boxed, and the device target do; the tau2 target does not (its verdict is its benchmark's, not a hash's)."""
    return isinstance(getattr(env, "capability", None), Capability)


def contract_gaps(env: object) -> list[str]:
    """The members of :class:`EnvProtocol` that ``env`` lacks, found without running any (no property is read):
    a consumer refuses an env that lacks one, naming them, instead of testing its class."""
    missing = object()
    return [name for name in CONTRACT_MEMBERS if getattr_static(env, name, missing) is missing]
