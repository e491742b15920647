"""Short, one-line descriptions of errors for command-line messages."""

from __future__ import annotations

from pydantic import ValidationError


def validation_summary(exc: ValidationError, limit: int = 3) -> str:
    """``field: message; field: message (and N more)`` from a pydantic error (its ``str`` is many lines
    with the whole input repeated)."""
    errors = exc.errors()
    parts = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errors[:limit]]
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(parts) + more
