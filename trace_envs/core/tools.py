"""Tools: typed, documented functions over a domain state, with OpenAI function schemas.

A tool is a plain function whose first parameter is the domain state and whose other parameters
are the tool's arguments::

    @tool(kind="read")
    def get_user_details(db: AirlineDB, user_id: str) -> User:
        \"\"\"Get the details of a user, including their reservations.

        Args:
            user_id: The user ID, such as 'sara_doe_496'.
        \"\"\"

The argument schema is derived from the type hints with pydantic (a model named ``parameters``)
and the descriptions from the Google-style docstring, so it never drifts from the code.
"""

from __future__ import annotations

import inspect as _inspect
import json as _json
import re as _re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, overload
from typing import get_type_hints as _get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

ToolKind = Literal["read", "write", "generic", "think"]


class ToolCall(BaseModel):
    """One call of a tool by name with keyword arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str = ""


class ToolResult(BaseModel):
    """What a tool call returned: its text content, or the text of its error."""

    call_id: str
    name: str
    content: str
    error: bool = False


class ToolError(Exception):
    """Raised by a tool for an expected failure; its message is shown to the agent."""


@dataclass(frozen=True)
class Docstring:
    """The parts of a Google-style docstring that a tool schema uses."""

    short: str
    long: str
    args: dict[str, str]


_SECTION = _re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Example|Examples|Note|Notes):\s*$")
_ARG_SECTIONS = ("Args", "Arguments", "Parameters")
_ARG_LINE = _re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


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
    for line in _inspect.cleandoc(doc or "").splitlines():
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


@dataclass(frozen=True)
class Tool:
    """A callable tool: the function, its argument model and its schema."""

    name: str
    fn: Callable[..., Any]
    description: str
    parameters: type[BaseModel]
    kind: ToolKind = "read"
    arg_descriptions: dict[str, str] = field(default_factory=dict)

    @property
    def mutates(self) -> bool:
        """Whether the tool can change state (tau2's rule: only ``write`` tools do)."""
        return self.kind == "write"

    @property
    def arg_names(self) -> list[str]:
        return list(self.parameters.model_fields)

    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling schema of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters.model_json_schema(),
            },
        }

    def __call__(self, state: Any, **arguments: Any) -> Any:
        return self.fn(state, **arguments)


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
        hints = _get_type_hints(function, include_extras=True)
        params = list(_inspect.signature(function).parameters.values())
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


class Toolset(Mapping[str, Tool]):
    """An ordered set of tools for one domain, and the rules for calling them.

    Subclasses change how arguments are checked (:meth:`bind`), how results and errors become
    text (:meth:`format_result`, :meth:`format_error`) and how schemas look (:meth:`schema`), so
    that each domain reproduces its benchmark's behaviour exactly.
    """

    def __init__(self, tools: Iterable[Tool]):
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"duplicate tool name {item.name!r}")
            self._tools[item.name] = item

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def subset(self, names: Iterable[str]) -> Toolset:
        """The same rules over only the named tools, in this toolset's order."""
        wanted = set(names)
        missing = sorted(wanted - set(self._tools))
        if missing:
            raise KeyError(f"unknown tools {missing}; this toolset has {list(self._tools)}")
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._tools = {k: v for k, v in self._tools.items() if k in wanted}
        return clone

    def schema(self, item: Tool) -> dict[str, Any]:
        return item.schema()

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of every tool, in order."""
        return [self.schema(item) for item in self._tools.values()]

    def bind(self, item: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate arguments against the tool's parameters; raise ToolError naming each problem."""
        unexpected = [name for name in arguments if name not in item.parameters.model_fields]
        if unexpected:
            raise ToolError(
                f"invalid arguments for tool '{item.name}': unexpected argument(s) {', '.join(map(repr, unexpected))}; "
                f"its arguments are {', '.join(map(repr, item.arg_names)) or 'none'}"
            )
        try:
            model = item.parameters.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolError(describe_validation_error(item.name, exc)) from None
        return {name: getattr(model, name) for name in item.parameters.model_fields}

    def format_result(self, value: Any) -> str:
        """Text of a successful result: strings as they are, everything else as JSON."""
        if isinstance(value, str):
            return value
        return _json.dumps(jsonable(value), ensure_ascii=False)

    def format_error(self, item_name: str, exc: BaseException) -> str:
        return f"Error: {exc}"

    def unknown_tool(self, name: str) -> str:
        return f"Error: Tool '{name}' not found. Available tools: {', '.join(self._tools)}."

    def call(self, state: Any, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run tool ``name`` on ``state`` under this toolset's calling rules and return its value; a failure
        raises (what :meth:`invoke` turns into an error result)."""
        item = self._tools.get(name)
        if item is None:
            raise KeyError(f"unknown tool {name!r}; this toolset has {list(self._tools)}")
        return item.fn(state, **self.bind(item, arguments))

    def invoke(self, state: Any, call: ToolCall) -> ToolResult:
        """Run one call on ``state``; every failure becomes an error result, never an exception."""
        item = self._tools.get(call.name)
        if item is None:
            return ToolResult.model_construct(
                call_id=call.id, name=call.name, content=self.unknown_tool(call.name), error=True
            )
        try:
            kwargs = self.bind(item, call.arguments)
            value = item.fn(state, **kwargs)
        except Exception as exc:  # a tool's failure is the agent's observation
            content = self.format_error(call.name, exc)
            return ToolResult.model_construct(call_id=call.id, name=call.name, content=content, error=True)
        return ToolResult.model_construct(
            call_id=call.id, name=call.name, content=self.format_result(value), error=False
        )


def jsonable(value: Any) -> Any:
    """Models to dicts (field order kept), containers recursively, the rest unchanged."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    """One line per problem: which argument, what was wrong, what was given."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"unexpected argument '{where}'")
        elif err["type"] == "missing":
            problems.append(f"missing required argument '{where}'")
        else:
            problems.append(f"argument '{where}': {err['msg']} (got {err.get('input')!r})")
    return f"invalid arguments for tool '{tool_name}': " + "; ".join(problems)
