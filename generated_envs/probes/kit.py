"""What the shipped probes share: whether a tool writes, and walks over the JSON values of tool results.

Each probe lives with its env (``generated_envs/probes/<env module>.py``) and is declared on the env's
:class:`~trace_envs.core.Capability`; they read only what the agent did (messages, tool calls with arguments,
tool results and errors) - never the env id, the policy, the task id or the outcome.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

WRITE_PREFIXES = (
    "cancel_", "modify_", "update_", "book_", "set_", "add_", "remove_", "send_", "return_", "exchange_",
    "create_", "delete_", "transfer_",
)  # fmt: skip
DATE_PARTS = ("year", "month", "day")


@cache
def tool_kinds() -> dict[str, str]:
    """``read`` / ``write`` / ``generic`` of every tool of the registered domains, by name (read once the
    domains are registered: ``import trace_envs`` registers them before any probe runs)."""
    from trace_envs.registry import get_domain, registered_domains

    kinds: dict[str, str] = {}
    for name in registered_domains():
        try:
            domain = get_domain(name)
        except Exception:  # a domain that fails to import is simply not consulted
            continue
        for tool_name in domain.toolset:
            kinds.setdefault(tool_name, domain.toolset[tool_name].kind)
    return kinds


def is_write(name: str) -> bool:
    """Whether a tool changes state (its domain's declared kind, else a name-prefix guess)."""
    kind = tool_kinds().get(name)
    return kind == "write" if kind is not None else name.startswith(WRITE_PREFIXES)


# ----- walking JSON values ------------------------------------------------------------------------
def leaves(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """(key, scalar) for every scalar in a JSON value (list items inherit their list's key)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, key)
    else:
        yield key, value


def dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from dicts(v)
    elif isinstance(value, list):
        for item in value:
            yield from dicts(item)


def values_under(value: Any, keys: set[str]) -> set[str]:
    return {str(v) for k, v in leaves(value) if k in keys and v is not None}


def all_scalars(value: Any) -> set[str]:
    out: set[str] = set()
    for key, v in leaves(value):
        if v is not None:
            out.add(str(v))
        if key is not None:
            out.add(key)
    return out


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def as_number(value: Any) -> float | None:
    """A numeric leaf (numbers, and strings made of digits such as ``"0273"``) as a float."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()):
        return float(value)
    return None


def numbers(value: Any, raw: str | None = None) -> list[float]:
    out = [n for _, v in leaves(value) if (n := as_number(v)) is not None]
    if value is None and raw:
        out += [float(m) for m in NUMBER.findall(raw)]
    return out


def string_values(value: Any) -> list[str]:
    """Strings of an argument: itself, the items of a list, the string fields of listed objects."""
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                out += [v for v in item.values() if isinstance(v, str)]
    return out


def record_and_siblings(results: list[Any], value: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The record holding ``value`` as an id (a field value, or its key in an object of objects) and
    the records beside it in the same container."""
    for result in results:
        containers: list[list[dict[str, Any]]] = []
        for node in [result, *dicts(result)]:
            if isinstance(node, dict):
                records = [v for v in node.values() if isinstance(v, dict)]
                if len(records) >= 2:
                    containers.append(records)
                for v in node.values():
                    if isinstance(v, list) and sum(isinstance(x, dict) for x in v) >= 2:
                        containers.append([x for x in v if isinstance(x, dict)])
            elif isinstance(node, list) and sum(isinstance(x, dict) for x in node) >= 2:
                containers.append([x for x in node if isinstance(x, dict)])
        for records in containers:
            for record in records:
                if value in {v for v in record.values() if isinstance(v, str)}:
                    return record, records
    return None
