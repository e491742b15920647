"""Parse an agent's action into tool calls or a message to the user, never raising.

Accepted tool-call forms: a JSON object ``{"name": ..., "arguments": {...}}`` (``arguments`` may
also be a JSON string, as OpenAI sends it, and ``parameters`` is accepted as its alias), a JSON
list of such objects, one or more Qwen/Hermes ``<tool_call>{...}</tool_call>`` blocks, a ``dict``,
a :class:`ToolCall`, or a list of those. Anything else is a message to the user. A :class:`ParsedAction`
is taken as already parsed (a boxed env's proxy parses a non-text action and sends the result to its box).
"""

from __future__ import annotations

import json as _json
import re as _re
from dataclasses import dataclass, field
from typing import Any

from .tools import ToolCall

STOP_TOKEN = "###STOP###"
"""Said by the user (or the agent) to end the conversation, as in tau2-bench."""

_TOOL_CALL_BLOCK = _re.compile(r"<tool_call>(.*?)</tool_call>", _re.DOTALL)
_FENCE = _re.compile(r"^```(?:json)?\s*(.*?)\s*```$", _re.DOTALL)
_EXPECTED = 'expected {"name": "<tool name>", "arguments": {...}} or <tool_call>{...}</tool_call>'


@dataclass
class ParsedAction:
    """The result of parsing one action: tool calls, or a message, plus parse errors."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    content: str | None = None
    """Free text that came with the tool calls (outside ``<tool_call>`` blocks), if any."""

    @property
    def is_message(self) -> bool:
        """True when the action is a message to the user (no calls and no malformed call)."""
        return not self.tool_calls and not self.errors


def format_tool_call(call: ToolCall) -> str:
    """The canonical action string for a tool call (what ``oracle_actions()`` returns)."""
    return _json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)


def parse_action(action: Any) -> ParsedAction:
    """Parse any action value; problems are reported in ``errors``, never raised."""
    if isinstance(action, ParsedAction):
        return action
    if isinstance(action, ToolCall):
        return ParsedAction(text=format_tool_call(action), tool_calls=[action])
    if isinstance(action, dict):
        return _from_objects([action], _safe_dumps(action))
    if isinstance(action, list | tuple):
        items = [a.model_dump() if isinstance(a, ToolCall) else a for a in action]
        return _from_objects(items, _safe_dumps(items))
    if not isinstance(action, str):
        return ParsedAction(text=repr(action), errors=[f"action must be text, got {type(action).__name__}"])
    return _parse_text(action)


def _parse_text(text: str) -> ParsedAction:
    blocks = _TOOL_CALL_BLOCK.findall(text)
    leftover = _TOOL_CALL_BLOCK.sub("", text)
    if blocks or "<tool_call>" in leftover:
        parsed = ParsedAction(text=text, content=leftover.replace("<tool_call>", "").strip() or None)
        for body in blocks:
            _add_json_calls(parsed, body.strip())
        if "<tool_call>" in leftover:
            parsed.errors.append("a <tool_call> block is not closed with </tool_call>")
        return parsed
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    candidate = fenced.group(1) if fenced else stripped
    if candidate.startswith(("{", "[")):
        try:
            data = _json.loads(candidate)
        except _json.JSONDecodeError as exc:
            if '"name"' in candidate:
                return ParsedAction(text=text, errors=[f"tool call is not valid JSON ({exc}); {_EXPECTED}"])
            return ParsedAction(text=text)
        if _looks_like_calls(data):
            return _from_objects(data if isinstance(data, list) else [data], text)
    return ParsedAction(text=text)


def _looks_like_calls(data: Any) -> bool:
    if isinstance(data, dict):
        return "name" in data or "tool_calls" in data
    return isinstance(data, list) and bool(data) and all(isinstance(d, dict) and "name" in d for d in data)


def _add_json_calls(parsed: ParsedAction, body: str) -> None:
    try:
        data = _json.loads(body)
    except _json.JSONDecodeError as exc:
        parsed.errors.append(f"tool call is not valid JSON ({exc}); {_EXPECTED}")
        return
    for item in data if isinstance(data, list) else [data]:
        _add_call(parsed, item)


def _from_objects(items: list[Any], text: str) -> ParsedAction:
    parsed = ParsedAction(text=text)
    for item in items:
        if isinstance(item, dict) and "tool_calls" in item and "name" not in item:
            for call in item["tool_calls"] or []:
                _add_call(parsed, call)
        else:
            _add_call(parsed, item)
    if not parsed.tool_calls and not parsed.errors:
        parsed.errors.append(f"no tool call found; {_EXPECTED}")
    return parsed


def _add_call(parsed: ParsedAction, item: Any) -> None:
    if not isinstance(item, dict):
        parsed.errors.append(f"tool call must be a JSON object, got {type(item).__name__}; {_EXPECTED}")
        return
    if isinstance(item.get("function"), dict):  # OpenAI wire form {"id", "type", "function": {...}}
        item = {**item["function"], "id": item.get("id", "")}
    name = item.get("name")
    if not isinstance(name, str) or not name:
        parsed.errors.append(f"tool call needs a non-empty string 'name'; {_EXPECTED}")
        return
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = _json.loads(arguments) if arguments.strip() else {}
        except _json.JSONDecodeError as exc:
            parsed.errors.append(f"arguments of tool call '{name}' are not valid JSON ({exc})")
            return
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        parsed.errors.append(f"arguments of tool call '{name}' must be a JSON object, got {type(arguments).__name__}")
        return
    call_id = item.get("id")
    parsed.tool_calls.append(ToolCall(name=name, arguments=arguments, id=call_id if isinstance(call_id, str) else ""))


def _safe_dumps(value: Any) -> str:
    try:
        return _json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)
