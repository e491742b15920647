"""A target domain: its state model, its tools and its policy, kept exactly as the benchmark has them.

Domains are registered by name in :mod:`trace_envs.registry` (``trace_envs.register_domain``), outside the contract."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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


DomainLookup = Callable[[str], Domain[Any]]
"""What finds a registered domain by name (the registry's ``get_domain``)."""
_DOMAIN_LOOKUP: list[DomainLookup] = []
"""The registered lookup, if any (a list, so registering needs no ``global``)."""


def set_domain_lookup(lookup: DomainLookup) -> None:
    """Register what :func:`registered_domain` asks (``import trace_envs`` registers the registry's ``get_domain``),
    so that a layer below the registry (a boxed env's proxy) finds a domain without importing it."""
    _DOMAIN_LOOKUP[:] = [lookup]


def registered_domain(name: str) -> Domain[Any]:
    """The domain registered as ``name``, from the registered lookup (a ``KeyError`` naming the fix if none is)."""
    if not _DOMAIN_LOOKUP:
        raise KeyError(f"no domain lookup is registered to find {name!r}: `import trace_envs` registers the registry's")
    return _DOMAIN_LOOKUP[0](name)
