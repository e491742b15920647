"""Tools: typed functions over a domain state, with OpenAI function schemas, and the toolset that calls them.

A :class:`Tool` is a plain function whose first parameter is the domain state and whose other parameters
are the tool's arguments, with a pydantic model of those arguments (``parameters``) for validation and
its schema. Domains make them with :func:`trace_envs.domains.tools.tool` (the schema from the type hints
and the docstring); an env module uses its domain's tools and defines none.
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
