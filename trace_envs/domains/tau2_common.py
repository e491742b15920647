"""What the tau2-bench domains (airline, retail) share: calling conventions, result text, hashes, fast reset.

API (used by ``trace_envs.domains.airline`` and ``trace_envs.domains.retail``):

* :class:`Tau2Toolset` — a :class:`~trace_envs.core.Toolset` that calls tools exactly as tau2's
  ``Environment.get_response`` does: no argument validation (``fn(db, **arguments)``), CPython's own
  ``TypeError`` wording with the class-qualified name (``RetailTools.get_user_details() missing 1
  required positional argument: 'user_id'``; the class name is the ``owner`` argument),
  ``"Error: " + str(exc)`` for any exception, ``Error: Tool '<name>' not found.`` for unknown names,
  and results serialised by :func:`tau2_serialize`; pydantic error links name upstream's pinned
  pydantic version (:func:`pin_pydantic_links`), so the text equals what tau2-bench records.
* :func:`tau2_serialize` — tau2's result-to-text rule (reference 1.4).
* :class:`Tau2DB` — base class of a domain database (``extra="forbid"``) with journaled writes:
  write tools call ``db.touch(db.orders, order_id)`` *before* mutating a top-level record (or before
  inserting a new key); :meth:`Tau2DB.restore` puts every touched record back, so a reset costs
  O(records touched) instead of a deep copy of the whole database.
* :func:`upstream_db_hash` — tau2's ``get_dict_hash(db.model_dump())`` (what its evaluator compares).
* :func:`canonical_db_dump` / :func:`canonical_db_hash` — the canonical hash of ``shared/data/README.md``
  (the one in ``gold_sample.json``): ``db.model_dump(mode="json")`` — every field, unset optional
  fields as ``null``, declared floats as floats — as compact sorted JSON, UTF-8 kept.
* :func:`file_db_dump` — the database in db.json's own form (unset optional fields omitted), so
  ``file_db_dump(load(db.json)) == db.json`` as JSON data.
* :class:`Tau2Domain` — a :class:`~trace_envs.core.Domain` whose ``dump_state``/``state_hash`` are the
  canonical ones, with ``upstream_hash`` and ``load_file``. Load a db.json once per env (each env owns
  its database) and reset it per episode with ``db.restore()``.
* :func:`calculate` and :func:`transfer_to_human_agents` — the two generic tools both domains share.

Tool functions take the database as their first parameter (named ``db``) and the tool's arguments
after it; every argument is required, as in tau2.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import math
import re
import types
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from trace_envs.core import Domain, Tool, ToolCall, ToolResult, Toolset, canonical_hash

from .tools import tool

__all__ = [
    "UPSTREAM_PYDANTIC_VERSION",
    "Tau2DB",
    "Tau2Domain",
    "Tau2Toolset",
    "calculate",
    "canonical_db_dump",
    "canonical_db_hash",
    "file_db_dump",
    "get_dict_hash",
    "pin_pydantic_links",
    "tau2_serialize",
    "transfer_to_human_agents",
    "upstream_db_hash",
]

DBT = TypeVar("DBT", bound="Tau2DB")
_MISSING: Any = object()


# ----- result text --------------------------------------------------------------------------------------
def _to_serializable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(warnings=False)
    if isinstance(value, dict):
        return {key: _to_serializable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_to_serializable(item) for item in value]
    if isinstance(value, bool | int | float):
        return str(value)
    return value


def tau2_serialize(value: Any) -> str:
    """A tool's return value as tau2 puts it in the tool message.

    ``str`` as is; pydantic models as ``json.dumps(model.model_dump(), default=str)`` (field-declaration
    order, separators ``", "``/``": "``); lists/tuples/dicts recursively; bare ``int``/``float``/``bool``
    (top level or inside containers, not inside models) ``str()``'d first, so they come out quoted.
    """
    if isinstance(value, str):
        return value
    return json.dumps(_to_serializable(value), default=str)


UPSTREAM_PYDANTIC_VERSION = "2.12"
"""The pydantic minor version tau2-bench pins (``uv.lock``: 2.12.4); its error links name it."""

_PYDANTIC_LINK = re.compile(r"https://errors\.pydantic\.dev/[0-9]+\.[0-9]+/")


def pin_pydantic_links(text: str) -> str:
    """``text`` with every ``https://errors.pydantic.dev/<version>/`` link naming upstream's pinned version.

    A ``ValidationError``'s text ends with a link naming the *installed* pydantic's minor version; tau2-bench
    replays a trajectory strictly (a replayed write must return the recorded text), so a link naming
    another version makes its evaluator raise instead of scoring. Only the link is rewritten: the rest of
    the message is the installed pydantic's wording (identical to 2.12's for the airline/retail models).
    """
    return _PYDANTIC_LINK.sub(f"https://errors.pydantic.dev/{UPSTREAM_PYDANTIC_VERSION}/", text)


# ----- hashes -------------------------------------------------------------------------------------------
def get_dict_hash(data: Any) -> str:
    """tau2's ``get_dict_hash``: sha256 of ``json.dumps(data, sort_keys=True, default=str)``."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def upstream_db_hash(db: BaseModel) -> str:
    """The hash tau2's evaluator compares: ``get_dict_hash(db.model_dump())`` (raw Python types, nulls kept)."""
    return get_dict_hash(db.model_dump(warnings=False))


def canonical_db_dump(db: BaseModel) -> dict[str, Any]:
    """What the canonical hash covers: every field (``None`` as ``null``), declared floats as floats."""
    return db.model_dump(mode="json", warnings=False)


def file_db_dump(db: BaseModel) -> dict[str, Any]:
    """The database as db.json stores it: ``None`` optional fields omitted (db.json holds no nulls)."""
    return db.model_dump(mode="json", exclude_none=True, warnings=False)


def canonical_db_hash(db: BaseModel) -> str:
    """The canonical database hash of ``shared/data/README.md`` (sorted compact JSON, UTF-8 kept)."""
    return canonical_hash(canonical_db_dump(db))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _to_json_data(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", warnings=False)
    if isinstance(value, dict):
        return {k: _to_json_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_json_data(v) for v in value]
    return value


# ----- the database with journaled writes -----------------------------------------------------------------
class Tau2DB(BaseModel):
    """A tau2 domain database: top-level dicts of records, mutated in place by write tools.

    Journal: every write tool calls :meth:`touch` on each top-level record it is about to change (or
    the key it is about to insert) before changing it. The first touch of a record since the last
    :meth:`restore` saves a deep copy of it; :meth:`restore` puts the saved records back (and removes
    inserted keys), which returns the database to its state at the last restore. Restoring replaces
    the record objects, so never hold on to a record across a restore.
    """

    model_config = ConfigDict(extra="forbid")

    # Empty defaults, not default factories: pydantic gives each instance its own copy of an empty
    # container, while a factory costs an ``inspect.signature`` per attribute per instance, which was
    # most of the time of loading a small database (``Tau2Domain.load_state``, run on every reset).
    _journal: list[tuple[MutableMapping[str, Any], str, Any]] = PrivateAttr(default=[])
    _touched: dict[tuple[int, str], None] = PrivateAttr(default={})
    _fragments: dict[tuple[str, str], tuple[Any, str]] = PrivateAttr(default={})
    _journaled: bool = PrivateAttr(default=True)

    def disable_journal(self) -> None:
        """For databases that are rebuilt instead of restored (capability envs): writes are not
        journaled, ``restore()`` is unavailable and hashes are computed in full (no fragment cache)."""
        self._journaled = False
        self._journal.clear()
        self._touched.clear()
        self._fragments.clear()

    def touch(self, collection: MutableMapping[str, Any], key: str) -> None:
        """Remember ``collection[key]`` (or its absence) before the first change since the last restore."""
        if not self._journaled:
            return
        mark = (id(collection), key)
        if mark in self._touched:
            return
        self._touched[mark] = None
        original = collection.get(key, _MISSING)
        saved = _MISSING if original is _MISSING else copy.deepcopy(original)
        self._journal.append((collection, key, saved))

    @property
    def dirty(self) -> bool:
        """Whether any record was touched since the last restore."""
        return bool(self._journal)

    @property
    def touched_count(self) -> int:
        return len(self._journal)

    def canonical_hash(self) -> str:
        """:func:`canonical_db_hash` of this database, reusing the JSON of records untouched since it was cached.

        Byte-identical to the full computation: the canonical JSON is assembled from per-record
        fragments in sorted-key order. A record's cached fragment is reused only while the same
        object is in place and it has not been touched since the last restore.
        """
        if not self._journaled:
            return canonical_db_hash(self)
        parts = []
        fragments, touched_marks = self._fragments, self._touched  # private attrs are slow to reach
        for name in sorted(type(self).model_fields):
            value = getattr(self, name)
            if not (isinstance(value, dict) and all(isinstance(v, BaseModel) for v in value.values())):
                parts.append(f"{_dumps(name)}:{_dumps(_to_json_data(value))}")
                continue
            collection_id = id(value)
            inner = []
            for key in sorted(value):
                record = value[key]
                cached = fragments.get((name, key))
                touched = (collection_id, key) in touched_marks
                if cached is not None and cached[0] is record and not touched:
                    fragment = cached[1]
                else:
                    fragment = f"{_dumps(key)}:{_dumps(record.model_dump(mode='json', warnings=False))}"
                    if not touched:
                        fragments[(name, key)] = (record, fragment)
                inner.append(fragment)
            parts.append(f"{_dumps(name)}:{{{','.join(inner)}}}")
        return hashlib.sha256(("{" + ",".join(parts) + "}").encode("utf-8")).hexdigest()

    def restore(self) -> None:
        """Undo every journaled change (newest first), leaving the state of the last restore."""
        if not self._journaled:
            raise RuntimeError("this database does not journal its writes (disable_journal() was called)")
        for collection, key, saved in reversed(self._journal):
            if saved is _MISSING:
                collection.pop(key, None)
            else:
                collection[key] = saved
        self._journal.clear()
        self._touched.clear()


# ----- calling tools the tau2 way --------------------------------------------------------------------------
def _clone_function(fn: Any, qualname: str) -> Any:
    """A copy of ``fn`` whose ``__qualname__`` (and so CPython's TypeError text) is ``qualname``."""
    clone = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__dict__.update(fn.__dict__)
    clone.__doc__ = fn.__doc__
    clone.__module__ = fn.__module__
    clone.__annotations__ = fn.__annotations__
    clone.__qualname__ = qualname
    return clone


class Tau2Toolset(Toolset):
    """tau2's calling convention over ``@tool`` functions ``fn(db, **arguments)``.

    ``owner`` is the upstream toolkit class name (``"RetailTools"``, ``"AirlineTools"``) that CPython
    names in argument errors. Upstream calls a bound method, so its first parameter is ``self``;
    passing ``self=...`` gives ``got multiple values for argument 'self'`` and passing our state
    parameter's name gives ``got an unexpected keyword argument``, exactly as upstream.
    """

    def __init__(self, tools: Iterable[Tool], owner: str):
        self.owner = owner
        cloned = []
        for item in tools:
            cloned.append(replace(item, fn=_clone_function(item.fn, f"{owner}.{item.fn.__name__}")))
        super().__init__(cloned)

    def bind(self, item: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """No validation or coercion: tau2 passes the raw arguments to the Python function."""
        return dict(arguments)

    def format_result(self, value: Any) -> str:
        return tau2_serialize(value)

    def format_error(self, item_name: str, exc: BaseException) -> str:
        """``"Error: " + str(exc)``, with pydantic's error links naming upstream's pinned version."""
        return pin_pydantic_links(f"Error: {exc}")

    def unknown_tool(self, name: str) -> str:
        return f"Error: Tool '{name}' not found."

    def call(self, db: Any, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run tool ``name`` with raw ``arguments``; exceptions propagate (as upstream's ``use_tool``)."""
        item = self.get(name)
        if item is None:
            raise ValueError(f"Tool '{name}' not found.")
        code = item.fn.__code__
        state_param = code.co_varnames[0]
        if state_param in arguments or "self" in arguments:
            # Emulate the bound method: CPython checks keywords in order.
            names = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
            for key in arguments:
                if key == "self":
                    raise TypeError(f"{item.fn.__qualname__}() got multiple values for argument 'self'")
                if key not in names:
                    raise TypeError(f"{item.fn.__qualname__}() got an unexpected keyword argument '{key}'")
        return item.fn(db, **arguments)

    def invoke(self, state: Any, call: ToolCall) -> ToolResult:
        """One tool message: ``content`` and ``error`` exactly as tau2 builds them."""
        if call.name not in self:
            return ToolResult(call_id=call.id, name=call.name, content=self.unknown_tool(call.name), error=True)
        try:
            value = self.call(state, call.name, call.arguments)
        except Exception as exc:  # every failure is the agent's observation, as upstream
            return ToolResult(call_id=call.id, name=call.name, content=self.format_error(call.name, exc), error=True)
        return ToolResult(call_id=call.id, name=call.name, content=self.format_result(value), error=False)

    def kind_of(self, name: str) -> str | None:
        """``read``/``write``/``generic`` of a tool, ``None`` for an unknown name."""
        item = self.get(name)
        return None if item is None else item.kind

    def mutates(self, name: str) -> bool:
        """Whether tau2's evaluator replays calls of this tool (only ``write`` tools)."""
        item = self.get(name)
        return item is not None and item.mutates


# ----- the domain ------------------------------------------------------------------------------------------
class Tau2Domain(Domain[DBT]):
    """A tau2 domain: canonical dump/hash, upstream hash, db.json loading."""

    def dump_state(self, state: DBT) -> dict[str, Any]:
        return canonical_db_dump(state)

    def state_hash(self, state: DBT) -> str:
        """The canonical hash; incremental (per-record cache) for a :class:`Tau2DB`, same digest."""
        return state.canonical_hash() if isinstance(state, Tau2DB) else canonical_db_hash(state)

    def upstream_hash(self, state: DBT) -> str:
        """tau2's own DB hash (different digest from :meth:`state_hash`, same equality decisions)."""
        return upstream_db_hash(state)

    def load_state(self, data: Mapping[str, Any]) -> DBT:
        """A fresh, unjournaled database (capability envs rebuild state per reset; journaling would
        only cost a deep copy per written record)."""
        state = super().load_state(data)
        if isinstance(state, Tau2DB):
            state.disable_journal()
        return state

    def load_file(self, path: str | Path) -> DBT:
        """A fresh database from a db.json file."""
        with open(path, encoding="utf-8") as handle:
            return self.state_model.model_validate(json.load(handle))


# ----- generic tools both domains have -----------------------------------------------------------------------
@tool(kind="generic")
def calculate(db: Any, expression: str) -> str:
    """Calculate the result of a mathematical expression.

    Args:
        expression: The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces.
    """
    if not all(char in "0123456789+-*/(). " for char in expression):
        raise ValueError("Invalid characters in expression")
    _refuse_huge_results(expression)
    return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))  # only digits and operators reach eval


_MAX_RESULT_BITS = 1 << 22
"""Largest integer ``calculate`` will build (about 1.3 million digits; ``9**1000000`` is fine)."""


def _refuse_huge_results(expression: str) -> None:
    """Refuse integer ``**``/``*`` whose result could exceed :data:`_MAX_RESULT_BITS` (e.g. ``9**9**9**9``).

    Deviation from upstream only where upstream would hang or exhaust memory: every other expression
    reaches ``eval`` unchanged (syntax errors too: parsed as ``eval`` parses, same message).
    """
    tree = compile(expression, "<string>", "eval", ast.PyCF_ONLY_AST)
    if isinstance(tree, ast.Expression):
        _bits_bound(tree.body)


def _bits_bound(node: ast.AST) -> tuple[float, bool]:
    """(upper bound of log2 |value|, whether the value can be an int) of a digits-and-operators expression.

    Only integers can grow without limit (float results overflow at once past 2**1024), so an integer
    power or product anywhere in the tree whose bound exceeds :data:`_MAX_RESULT_BITS` raises ``ValueError``.
    """
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int):
            return float(abs(node.value).bit_length()), True
        return 1024.0, False
    if isinstance(node, ast.UnaryOp):
        return _bits_bound(node.operand)
    if isinstance(node, ast.BinOp):
        (left, left_int), (right, right_int) = _bits_bound(node.left), _bits_bound(node.right)
        if isinstance(node.op, ast.Div):
            return 1024.0, False
        if isinstance(node.op, ast.Pow):
            if not (left_int and right_int):
                return 1024.0, False
            if left <= 1.0:  # 0, 1 or -1 to any power
                return 1.0, True
            bits = left * 2.0**right if right < 64 else math.inf
            if bits > _MAX_RESULT_BITS:
                raise ValueError("Expression too large to calculate")
            return bits, True
        if isinstance(node.op, ast.Mult):
            if left_int and right_int and left + right > _MAX_RESULT_BITS:
                raise ValueError("Expression too large to calculate")
            return left + right, left_int and right_int
        return max(left, right) + 1.0, left_int and right_int
    children = [_bits_bound(child) for child in ast.iter_child_nodes(node)]
    return max((bits for bits, _ in children), default=0.0), False


@tool(kind="generic")
def transfer_to_human_agents(db: Any, summary: str) -> str:
    """Transfer the user to a human agent, with a summary of the user's issue.

    Only transfer if
     -  the user explicitly asks for a human agent
     -  given the policy and the available tools, you cannot solve the user's issue.

    Args:
        summary: A summary of the user's issue.
    """
    return "Transfer successful"
