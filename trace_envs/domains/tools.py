"""``@tool``: a typed, documented function over a domain state becomes a :class:`~trace_envs.core.Tool`::

    @tool(kind="read")
    def get_user_details(db: AirlineDB, user_id: str) -> User:
        \"\"\"Get the details of a user, including their reservations.

        Args:
            user_id: The user ID, such as 'sara_doe_496'.
        \"\"\"

The argument schema is derived from the type hints with pydantic (a model named ``parameters``)
and the descriptions from the Google-style docstring, so it never drifts from the code. It builds
domains (the tau2 ports, the toy shop, a plugin's own domain), not env modules (the synthesis contract
gate refuses a module that defines tools), so it lives here rather than in the env contract.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints, overload

from pydantic import Field, create_model

from trace_envs.core.tools import Tool, ToolKind


@dataclass(frozen=True)
class Docstring:
    """The parts of a Google-style docstring that a tool schema uses."""

    short: str
    long: str
    args: dict[str, str]


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Example|Examples|Note|Notes):\s*$")
_ARG_SECTIONS = ("Args", "Arguments", "Parameters")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google-style docstring into short description, long description and Args.

    Argument descriptions keep their line breaks; continuation lines are indented deeper than
    the argument names.
    """
    head: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    arg_indent: int | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 0 and _SECTION.match(stripped):
            section, arg_indent, current = stripped[:-1], None, None
            continue
        if section is None:
            head.append(line)
            continue
        if section not in _ARG_SECTIONS or not stripped:
            continue
        arg_indent = indent if arg_indent is None else arg_indent
        match = _ARG_LINE.match(stripped)
        if match and indent == arg_indent:
            current = match.group(1).lstrip("*")
            args[current] = match.group(2).strip()
        elif current is not None:
            args[current] = f"{args[current]}\n{stripped}" if args[current] else stripped
    text = "\n".join(head).strip()
    short, _, long = text.partition("\n\n")
    return Docstring(short=short.strip(), long=long.strip(), args=args)


@overload
def tool(
    fn: Callable[..., Any], *, name: str | None = None, kind: ToolKind = "read", description: str | None = None
) -> Tool: ...
@overload
def tool(
    fn: None = None, *, name: str | None = None, kind: ToolKind = "read", description: str | None = None
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    kind: ToolKind = "read",
    description: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn ``fn(state, **args)`` into a :class:`Tool`; usable bare or with keyword options."""

    def build(function: Callable[..., Any]) -> Tool:
        doc = parse_docstring(function.__doc__)
        hints = get_type_hints(function, include_extras=True)
        params = list(inspect.signature(function).parameters.values())
        if not params:
            raise TypeError(f"tool {function.__name__!r} must take the domain state as its first parameter")
        fields: dict[str, Any] = {}
        for param in params[1:]:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool {function.__name__!r}: *args/**kwargs cannot be described in a schema")
            if param.name not in hints:
                raise TypeError(f"tool {function.__name__!r}: argument {param.name!r} needs a type hint")
            if param.name not in doc.args:
                raise TypeError(
                    f"tool {function.__name__!r}: argument {param.name!r} is not described in the docstring's Args:"
                )
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (hints[param.name], Field(default, description=doc.args[param.name]))
        model = create_model("parameters", **fields)
        text = description if description is not None else doc.short + (f"\n\n{doc.long}" if doc.long else "")
        if not text:
            raise TypeError(f"tool {function.__name__!r} needs a docstring that says what it does")
        return Tool(
            name=name or function.__name__,
            fn=function,
            description=text,
            parameters=model,
            kind=kind,
            arg_descriptions=dict(doc.args),
        )

    return build(fn) if fn is not None else build
