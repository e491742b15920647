"""Wording helpers for command output."""

from __future__ import annotations


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``"1 case"``, ``"2 cases"``, ``"0 cases"`` (``plural_form`` for irregular nouns)."""
    return f"{count} {noun if count == 1 else plural_form or noun + 's'}"
