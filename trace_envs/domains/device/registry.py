"""``device_tool``: turns a documented function into a core ``Tool`` plus the facts ToolSandbox needs.

ToolSandbox derives a tool's schema from its docstring (section 3.5 of the reference): the
description is every blank-line-separated block before ``Args:`` (skipping blocks after
``Returns:``/``Example:``) joined with one space, line breaks inside a block kept; argument
descriptions are the ``name: text`` lines of ``Args:`` with continuation lines joined by a space.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, create_model

from trace_envs.core import Tool

from .errors import NOT_GIVEN, NotGiven
from .validators import resolved_hints, union_members

Role = Literal["AGENT", "USER"]

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_HEADER = re.compile(r"^(Args|Returns|Raises|Example|Examples):\s*$")
_ARG = re.compile(r"^(\w+)\s*:\s*(.*)$")


@dataclass(frozen=True)
class DeviceToolSpec:
    """What the toolset needs beyond the core ``Tool``: module, audience, typing and defaults."""

    name: str
    module: str
    visible_to: Role
    typechecked: bool
    hints: dict[str, Any]
    defaults: dict[str, Any]
    arg_names: tuple[str, ...]
    required: tuple[str, ...]

    def json_type(self, arg: str) -> str:
        """The schema type of an argument: Optional/NotGiven dropped, ``Union[float, int]`` → number."""
        members = [m for m in union_members(self.hints[arg]) if m not in (type(None), NotGiven)]
        if set(members) == {float, int}:
            return "number"
        return _JSON_TYPES[members[0]]


TOOL_SPECS: dict[str, DeviceToolSpec] = {}


def docstring_description(doc: str) -> tuple[str, dict[str, str]]:
    """(description, argument descriptions) from a ToolSandbox-style docstring."""
    blocks = [b for b in re.split(r"\n\s*\n", inspect.cleandoc(doc)) if b.strip()]
    kept: list[str] = []
    args: dict[str, str] = {}
    stop = False
    for block in blocks:
        lines = block.splitlines()
        head = lines[0].strip()
        if _HEADER.match(head) or any(_HEADER.match(line.strip()) for line in lines):
            stop = True
            section: str | None = None
            current: str | None = None
            for line in lines:
                stripped = line.strip()
                header = _HEADER.match(stripped)
                if header:
                    section, current = header.group(1), None
                    continue
                if section != "Args" or not stripped:
                    continue
                match = _ARG.match(stripped)
                if match and (current is None or len(line) - len(line.lstrip()) <= 4):
                    current = match.group(1)
                    args[current] = match.group(2).strip()
                elif current is not None:
                    args[current] = f"{args[current]} {stripped}".strip()
            continue
        if not stop:
            kept.append(block)
    return " ".join(kept), args


def device_tool(
    module: str,
    *,
    kind: Literal["read", "write"] = "read",
    visible_to: Role = "AGENT",
    typechecked: bool = True,
) -> Callable[[Callable[..., Any]], Tool]:
    """Register ``fn(state, **args)`` as a device tool of ToolSandbox module ``module``."""

    def build(fn: Callable[..., Any]) -> Tool:
        description, arg_docs = docstring_description(fn.__doc__ or "")
        hints = resolved_hints(fn)
        params = list(inspect.signature(fn).parameters.values())[1:]
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
        fields: dict[str, Any] = {}
        for param in params:
            if param.name not in arg_docs:
                raise TypeError(f"device tool {fn.__name__!r}: argument {param.name!r} is not described in Args:")
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (Any, Field(default, description=arg_docs[param.name]))
        model = create_model("parameters", **fields)
        spec = DeviceToolSpec(
            name=fn.__name__,
            module=module,
            visible_to=visible_to,
            typechecked=typechecked,
            hints={p.name: hints[p.name] for p in params},
            defaults=defaults,
            arg_names=tuple(p.name for p in params),
            required=tuple(p.name for p in params if p.default is p.empty),
        )
        TOOL_SPECS[spec.name] = spec
        return Tool(
            name=fn.__name__,
            fn=fn,
            description=description,
            parameters=model,
            kind=kind,
            arg_descriptions=arg_docs,
        )

    return build


def given(value: Any) -> bool:
    """Whether an optional argument was given (is not the NOT_GIVEN sentinel)."""
    return value is not NOT_GIVEN
