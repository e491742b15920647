"""A target domain: its state model, its tools and its policy, kept exactly as the benchmark has them."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from .canonical import canonical_hash
from .tools import Toolset

StateT = TypeVar("StateT", bound=BaseModel)


class Domain(Generic[StateT]):
    """State model + toolset + policy text. Subclasses override the state (de)serialisation
    where the benchmark's JSON layout differs from pydantic's default dump."""

    def __init__(self, name: str, state_model: type[StateT], toolset: Toolset, policy: str = ""):
        self.name = name
        self.state_model = state_model
        self.toolset = toolset
        self.policy = policy

    def load_state(self, data: Mapping[str, Any]) -> StateT:
        """A fresh state object built from JSON data (never shares containers with ``data``)."""
        return self.state_model.model_validate(data)

    def dump_state(self, state: StateT) -> dict[str, Any]:
        """The state as plain JSON data, in the benchmark's file layout."""
        return state.model_dump(mode="json")

    def state_hash(self, state: StateT) -> str:
        """Canonical hash of the state (sha256 of sorted-key compact JSON)."""
        return canonical_hash(self.dump_state(state))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, tools={len(self.toolset)})"


_DOMAIN_FACTORIES: dict[str, str] = {}
_DOMAINS: dict[str, Domain[Any]] = {}


def register_domain(name: str, factory: str) -> None:
    """Register ``"package.module:attribute"`` (a Domain or a zero-argument callable returning one)."""
    _DOMAIN_FACTORIES[name] = factory
    _DOMAINS.pop(name, None)


def get_domain(name: str) -> Domain[Any]:
    """The registered domain called ``name``, imported on first use."""
    if name not in _DOMAINS:
        if name not in _DOMAIN_FACTORIES:
            raise KeyError(f"unknown domain {name!r}; registered domains: {sorted(_DOMAIN_FACTORIES)}")
        module_name, _, attribute = _DOMAIN_FACTORIES[name].partition(":")
        target = getattr(importlib.import_module(module_name), attribute)
        domain = target if isinstance(target, Domain) else target()
        if domain.name != name:
            raise ValueError(f"domain registered as {name!r} calls itself {domain.name!r}")
        _DOMAINS[name] = domain
    return _DOMAINS[name]


def registered_domains() -> list[str]:
    return sorted(_DOMAIN_FACTORIES)
