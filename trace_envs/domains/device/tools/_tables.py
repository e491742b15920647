"""Table helpers shared by the contact, messaging and reminder tools (filters, lookups, errors)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..errors import NOT_GIVEN, DuplicateError, NoDataError
from ..fuzzy import extract

FAKE_ADDRESS = "0x7F3A2C1D5E90"
"""Upstream's removal errors print a polars expression with its memory address; ours is fixed."""


def no_criteria(columns: tuple[str, ...]) -> ValueError:
    return ValueError(f"No search criteria are given. At least one search criteria should be provided among {columns}")


def exact(rows: list[BaseModel], column: str, value: Any) -> list[BaseModel]:
    """Rows whose cell equals ``value`` (a null cell or a ``None`` value never matches, as in polars)."""
    if value is NOT_GIVEN:
        return rows
    if value is None:
        return []
    return [
        r for r in rows if (cell := getattr(r, column)) is not None and type(cell) is _kind(value) and cell == value
    ]


def _kind(value: Any) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int | float):
        return type(value) if isinstance(value, float) else float
    return type(value)


def exact_number(rows: list[BaseModel], column: str, value: Any) -> list[BaseModel]:
    if value is NOT_GIVEN:
        return rows
    if value is None:
        return []
    return [r for r in rows if (cell := getattr(r, column)) is not None and cell == value]


def fuzzy(rows: list[BaseModel], column: str, query: Any, threshold: float) -> list[BaseModel]:
    """rapidfuzz ``process.extract`` (WRatio, default_process, limit 5): best rows first."""
    if query is NOT_GIVEN:
        return rows
    if query is None:
        return []
    if not isinstance(query, str):
        raise TypeError("sentence must be a String")
    matches = extract(query, [getattr(r, column) for r in rows], score_cutoff=threshold, limit=5)
    return [rows[index] for _, _, index in matches]


def bounded(rows: list[BaseModel], column: str, lower: Any, upper: Any) -> list[BaseModel]:
    """Inclusive range filter; null cells never match a given bound."""
    if lower is not NOT_GIVEN:
        rows = [r for r in rows if (cell := getattr(r, column)) is not None and cell >= lower]
    if upper is not NOT_GIVEN:
        rows = [r for r in rows if (cell := getattr(r, column)) is not None and cell <= upper]
    return rows


def find_one(rows: list[Any], column: str, value: str) -> int:
    """Index of the single row whose ``column`` equals ``value`` (NoDataError / DuplicateError otherwise)."""
    hits = [i for i, row in enumerate(rows) if getattr(row, column) == value]
    if not hits:
        raise NoDataError(f"No db entry matching {column}={value!r} found")
    if len(hits) > 1:
        raise DuplicateError(f"More than 1 entry with {column}={value!r} found")
    return hits[0]


def polars_repr(expression: str) -> str:
    """How polars 0.20 prints an expression: its text cut at 30 characters, and its address."""
    shown = expression if len(expression) <= 30 else expression[:30] + "…"
    return f"<Expr [{shown!r}] at {FAKE_ADDRESS}>"


def removal_predicate(column: str, value: str) -> str:
    """The text of upstream's removal filter: the id equality and the snapshot's message index.

    Upstream removes rows with ``(col(column) == value) & (col("sandbox_message_index") == i)`` where ``i``
    is the snapshot being written. That index is not part of this world (the trajectory keeps snapshots),
    and it never reaches the 30 characters polars prints, so the text stops before it.
    """
    return f'[([(col("{column}")) == (String({value}))]) & ([(col("sandbox_message_index")) == (dyn int: '


def remove_matching(rows: list[Any], column: str, value: str) -> list[Any]:
    """Rows without those matching ``value``; NoDataError with upstream's predicate text if none match."""
    kept = [row for row in rows if getattr(row, column) != value]
    if len(kept) == len(rows):
        raise NoDataError(f"No db entry matching predicate={polars_repr(removal_predicate(column, value))} found")
    return kept


def dump(rows: list[BaseModel]) -> list[dict[str, Any]]:
    return [row.model_dump() for row in rows]
