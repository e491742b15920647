"""Discovery (run once): the analyst reads a sample of successful and failed trajectories and
proposes the canonical capability dictionary; names are normalised to snake_case and duplicates
merged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core.templates import render_template
from trace_envs.llm.base import ChatModel, Usage
from trace_envs.rollout.store import EpisodeRecord

from .known import known_capabilities
from .models import CapabilityDef, CapabilityDictionary, to_snake_case
from .parsing import ask_structured
from .trajectories import sample_for_discovery


class _Proposal(BaseModel):
    """The analyst's raw answer (names not yet normalised or merged)."""

    capabilities: list[dict[str, Any]] = Field(min_length=1)


def merge_capabilities(entries: Sequence[dict[str, Any]]) -> CapabilityDictionary:
    """Normalise names to snake_case and merge entries whose names coincide (the first description
    wins; a longer later one replaces an empty first). Entries without a usable name are dropped."""
    merged: dict[str, str] = {}
    for entry in entries:
        name = to_snake_case(str(entry.get("name", "")))
        description = " ".join(str(entry.get("description", "")).split())
        if not name or not name[0].isalpha():
            continue
        if name not in merged or not merged[name]:
            merged[name] = description
    if not merged:
        raise ValueError("the answer holds no capability with a usable name")
    return CapabilityDictionary(
        capabilities=[CapabilityDef(name=n, description=d or n.replace("_", " ")) for n, d in merged.items()]
    )


async def discover(
    analyst: ChatModel,
    records: Sequence[EpisodeRecord],
    *,
    token_budget: int = 60_000,
    per_trajectory: int = 6_000,
    seed: int = 0,
    known: bool = True,
    max_repairs: int = 2,
    sampling: dict[str, Any] | None = None,
    min_capabilities: int = 3,
    max_capabilities: int = 12,
) -> tuple[CapabilityDictionary, Usage]:
    """Ask ``analyst`` for the capability dictionary of ``records``; returns it and the usage."""
    if not records:
        raise ValueError("discovery needs at least one trajectory; the store is empty")
    texts = sample_for_discovery(records, token_budget=token_budget, per_trajectory=per_trajectory, seed=seed)
    if not texts:
        raise ValueError(
            f"no trajectory fits the discovery budget of {token_budget} tokens; raise discovery_token_budget"
        )
    prompt = render_template(
        "prompts/analysis_discover.jinja",
        trajectories=texts,
        known=known_capabilities() if known else {},
        min_capabilities=min_capabilities,
        max_capabilities=max_capabilities,
    )
    proposal, usage = await ask_structured(
        analyst,
        [{"role": "user", "content": prompt}],
        _Proposal,
        max_repairs=max_repairs,
        sampling={"max_tokens": 4096, **(sampling or {})},
        normalize=lambda data: {"capabilities": data} if isinstance(data, list) else data,
        validate=lambda p: merge_capabilities(p.capabilities),
    )
    return merge_capabilities(proposal.capabilities), usage
