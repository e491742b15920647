"""Every problem of a pydantic ``ValidationError`` in one line, each naming its field and the fix: the one
formatter behind the command line's usage errors and the config files' errors (a file with three problems
names all three, and an unknown key is named with the keys allowed where it is); and the deprecated names
of config keys and API fields, moved to their new names with a warning that says what to use."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, ValidationError


def _model_at(model: Any, location: tuple[Any, ...]) -> Any:
    """The pydantic model that holds the field at ``location`` (``None`` where the path leaves known models)."""
    for part in location:
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        model = fields[part].annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _description(model: Any, location: tuple[Any, ...]) -> str | None:
    parent = _model_at(model, location[:-1]) if location else None
    field = parent.model_fields.get(location[-1]) if parent is not None else None
    return field.description if field is not None else None


def _fix(error: Any, location: tuple[Any, ...], model: type[BaseModel] | None) -> str:
    """What to do about one problem, in parentheses (empty when pydantic's message already says it)."""
    kind = error["type"]
    if kind == "extra_forbidden":
        parent = _model_at(model, location[:-1]) if model is not None else None
        allowed = f"; allowed here: {', '.join(parent.model_fields)}" if parent is not None else ""
        return f" (unknown key {location[-1]!r}: remove it or fix its spelling{allowed})"
    if kind == "missing":
        return " (add it)"
    says_it = kind in ("literal_error", "value_error", "assertion_error")  # the message lists the values or the fix
    described = _description(model, location) if model is not None and not says_it else None
    return f" (expected: {described})" if described else ""


def validation_problems(
    exc: ValidationError,
    model: type[BaseModel] | None = None,
    *,
    prefix: str | Callable[[tuple[Any, ...]], str] = "",
    show_input: bool = False,
) -> str:
    """``field: message (fix); field: message (fix)`` for every error of ``exc``. ``model`` (the validated
    class) lets the fix name the keys allowed beside an unknown one and a field's description; ``prefix``
    goes before each field (``train.``, or a function of the field's location); ``show_input`` adds the
    value given (``field=value``)."""
    parts = []
    for error in exc.errors():
        location = tuple(error["loc"])
        before = prefix(location) if callable(prefix) else prefix
        field = before + ".".join(map(str, location)) if location else before.rstrip(".") or "(top level)"
        given = f"={error['input']!r}" if show_input and error["type"] != "missing" and location else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{field}{given}: {message}{_fix(error, location, model)}")
    return "; ".join(parts)


class RenamedWarning(DeprecationWarning):
    """A deprecated name (a config key, an API field or argument) was used; the message says what to use. The
    command line shows it as a ``warning:`` line (Python hides a ``DeprecationWarning`` outside ``__main__``)."""


def warn_renamed(old: str, new: str, where: str = "") -> None:
    """Warn (:class:`RenamedWarning`) that ``old`` is a deprecated name of ``new``, kept for one release."""
    warnings.warn(
        f"{where}{old} is deprecated and will be removed in the next release: use {where}{new}",
        RenamedWarning,
        stacklevel=3,
    )


def renamed_keys(values: Any, renames: Mapping[str, str], where: str = "") -> Any:
    """``values`` (what a model is about to validate) with each deprecated key of ``renames`` (old -> new) moved
    to its new name, warning for each; a mapping that gives both names is an error naming the one to keep."""
    if not isinstance(values, Mapping) or not any(old in values for old in renames):
        return values
    moved = dict(values)
    for old, new in renames.items():
        if old not in moved:
            continue
        if new in moved:
            raise ValueError(f"{where}{old} and {where}{new} are the same setting: give only {where}{new}")
        warn_renamed(old, new, where)
        moved[new] = moved.pop(old)
    return moved


P = ParamSpec("P")
R = TypeVar("R")


def renamed_arguments(renames: Mapping[str, str]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator that accepts each deprecated keyword argument of ``renames`` (old -> new) for one release,
    passing it on under its new name with a warning that says what to use."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            return function(*args, **renamed_keys(kwargs, renames, f"{function.__name__}(): "))

        return wrapper

    return decorate
