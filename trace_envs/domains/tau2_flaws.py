"""Deficit rules on tau2 gold tool calls, shared by the capabilities that declare them (a :class:`Tau2Flaw`
each: ``rule(calls, is_write, state, rng)``). A capability names its rule on its declaration
(``Capability(flaws={"tau2": near_miss_argument})``); :mod:`trace_envs.targets.tau2.flaws` applies them.

- :func:`skip_lookups_before_write` (precondition verification): skip the non-writing calls before the first write;
- :func:`stop_after_first_write` (multi-step task completion);
- :func:`near_miss_argument` (tool-calling precision, structured data reasoning): swap one argument of the
  first write for a near-miss value from the state (another id, name or number of the same kind in the DB);
  in a list or mapping argument (airline's ``passengers``, ``flights``) one scalar inside is swapped.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from trace_envs.core import ToolCall

IsWrite = Callable[[str], bool]
_MISSING: Any = object()


class Tau2Flaw(Protocol):
    """Applies the capability's deficit to a tau2 task's gold tool calls (``is_write(name)``: whether a tool
    writes; ``state``: the task's database as JSON; ``rng``: seeded by the task id)."""

    def __call__(
        self, calls: list[ToolCall], is_write: IsWrite, state: Any, rng: random.Random, /
    ) -> list[ToolCall]: ...


def skip_lookups_before_write(
    calls: list[ToolCall], is_write: IsWrite, state: Any = None, rng: random.Random | None = None
) -> list[ToolCall]:
    """Drop the lookups before the first write (a :class:`Tau2Flaw`; state and rng unused)."""
    first = next((i for i, c in enumerate(calls) if is_write(c.name)), None)
    if first is None:
        return calls
    return calls[first:]


def stop_after_first_write(
    calls: list[ToolCall], is_write: IsWrite, state: Any = None, rng: random.Random | None = None
) -> list[ToolCall]:
    """Keep the calls up to the first write (a :class:`Tau2Flaw`; state and rng unused)."""
    first = next((i for i, c in enumerate(calls) if is_write(c.name)), None)
    return calls if first is None else calls[: first + 1]


@dataclass(frozen=True)
class StateIndex:
    """What near misses are drawn from: every scalar value seen under each key of a state, and the key
    lists of its mappings. Built once per state (a walk over the whole database), reused per task."""

    by_key: dict[str, set[Any]]
    key_lists: list[list[str]]

    @classmethod
    def of(cls, state: Any) -> StateIndex:
        by_key: dict[str, set[Any]] = {}
        key_lists: list[list[str]] = []
        stack: list[tuple[Any, str]] = [(state, "")]
        while stack:
            node, field = stack.pop()
            if isinstance(node, dict):
                key_lists.append([k for k in node if isinstance(k, str)])
                stack.extend((value, key) for key, value in node.items())
            elif isinstance(node, list):
                stack.extend((item, field) for item in node)  # list items count as values of the list's field
            elif isinstance(node, str | int | float) and not isinstance(node, bool) and field:
                by_key.setdefault(field, set()).add(node)
        return cls(by_key, key_lists)


def near_misses(value: Any, by_key: dict[str, set[Any]], key_lists: list[list[str]]) -> list[Any]:
    """Other values of the same kind as ``value`` in the state: values stored under the same field
    elsewhere, or sibling keys of a mapping keyed by ``value`` (sorted, so the choice is seeded only)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return []  # only scalars have near misses (a dict or list is unhashable and has no single kind)
    found: set[Any] = set()
    for values in by_key.values():
        if value in values:
            found.update(v for v in values if type(v) is type(value))
    if isinstance(value, str):
        for keys in key_lists:
            if value in keys:
                found.update(keys)
    found.discard(value)
    return sorted(found, key=lambda v: (str(type(v)), str(v)))


def near_miss_argument(calls: list[ToolCall], is_write: IsWrite, state: Any, rng: random.Random) -> list[ToolCall]:
    """Swap one scalar of the first write's arguments (else the first call's) for a near-miss value
    from ``state`` (the state's data, or its :class:`StateIndex`).

    Arguments are searched in sorted name order, then depth first through lists (in order) and
    mappings (sorted keys), so nested shapes such as airline's ``passengers`` (a list of dicts) get a
    leaf swapped (e.g. one passenger's date of birth) instead of being compared as a whole.
    """
    if not calls:
        return calls
    index = next((i for i, c in enumerate(calls) if is_write(c.name)), 0)
    call = calls[index]
    known = state if isinstance(state, StateIndex) else StateIndex.of(state)
    for name in sorted(call.arguments):
        swapped = _swap_leaf(call.arguments[name], known.by_key, known.key_lists, rng)
        if swapped is not _MISSING:
            return _replace(calls, index, name, swapped)
    return calls


def _swap_leaf(value: Any, by_key: dict[str, set[Any]], key_lists: list[list[str]], rng: random.Random) -> Any:
    """``value`` with its first swappable scalar replaced by a near miss, or ``_MISSING`` if none is."""
    if isinstance(value, list):
        for position, item in enumerate(value):
            swapped = _swap_leaf(item, by_key, key_lists, rng)
            if swapped is not _MISSING:
                return [*value[:position], swapped, *value[position + 1 :]]
        return _MISSING
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            swapped = _swap_leaf(value[key], by_key, key_lists, rng)
            if swapped is not _MISSING:
                return {**value, key: swapped}
        return _MISSING
    options = near_misses(value, by_key, key_lists)
    return rng.choice(options) if options else _MISSING


def _replace(calls: list[ToolCall], index: int, name: str, value: Any) -> list[ToolCall]:
    changed = calls[index].model_copy(update={"arguments": {**calls[index].arguments, name: value}})
    return [*calls[:index], changed, *calls[index + 1 :]]
