"""Exceptions the device tools raise, printed the way ToolSandbox's console prints them.

ToolSandbox shows a failed call as the last traceback line, ``"{ExceptionClass}: {message}"``:
builtin exceptions print bare (``PermissionError: …``), library exceptions with their module path
(``polars.exceptions.NoDataError: …``). The library classes here carry that path in ``display_name``
so the agent sees the same text without those libraries being installed.
"""

from __future__ import annotations

from typing import ClassVar, Final


class NotGiven:
    """The "argument not given" sentinel of optional search/modify arguments (distinct from ``None``)."""

    _instance: ClassVar[NotGiven | None] = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False

    def __deepcopy__(self, memo: object) -> NotGiven:
        return self


NOT_GIVEN: Final = NotGiven()


class DeviceLibraryError(Exception):
    """Base of the errors that upstream raises from third-party libraries."""

    display_name: ClassVar[str] = ""


class DuplicateError(DeviceLibraryError):
    display_name = "polars.exceptions.DuplicateError"


class NoDataError(DeviceLibraryError):
    display_name = "polars.exceptions.NoDataError"


class NumberParseException(DeviceLibraryError):
    display_name = "phonenumbers.phonenumberutil.NumberParseException"


class UndefinedUnitError(DeviceLibraryError):
    display_name = "pint.errors.UndefinedUnitError"


class DimensionalityError(DeviceLibraryError):
    display_name = "pint.errors.DimensionalityError"


def exception_line(exc: BaseException) -> str:
    """The last traceback line of ``exc`` as ToolSandbox shows it to the agent.

    As in Python's tracebacks, a class outside ``builtins`` is printed with its module path (pint's own
    errors, for instance); our stand-ins for library errors print the library's path (``display_name``).
    """
    kind = type(exc)
    module = "" if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}."
    name = getattr(exc, "display_name", "") or f"{module}{kind.__qualname__}"
    message = str(exc)
    return f"{name}: {message}" if message else name
