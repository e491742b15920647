"""``unit_conversion``'s arithmetic: pint, called the way upstream ToolSandbox calls it.

Upstream runs ``pint.Quantity(amount, from_unit).to(to_unit).magnitude`` and, when a unit is undefined,
retries once with both names lower-cased (so an unknown ``'Foo'`` is reported as ``'foo'``). Exactness
depends on pint's arithmetic and unit definitions, so we call pint itself (the ``device`` extra, imported on
first use). Upstream pins pint 0.23, which cannot be imported beside numpy 2; pint 0.24 gives the same
results on everyday units but prints a DimensionalityError's units in another order, so that message is
rebuilt in pint 0.23's order here. ``tests/domains/data/device_reference.json`` records pint 0.23's answers.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from .errors import DimensionalityError, UndefinedUnitError
from .extras import require


@functools.cache
def _registry() -> Any:
    """A private registry with pint's default definitions (upstream's application registry has the same)."""
    return require("pint", "unit_conversion").UnitRegistry()


def _exponent(value: float) -> str:
    return f"{abs(value):g}"  # pint uses ":n", the same as ":g" unless a program sets a numeric locale


def pint023_units(items: Iterable[tuple[str, float]]) -> str:
    """A units or dimensions container as pint 0.23 prints it: sorted by name, numerator / denominators."""
    numerator: list[str] = []
    denominator: list[str] = []
    for name, power in sorted(items):
        if power == 1:
            numerator.append(name)
        elif power > 0:
            numerator.append(f"{name} ** {_exponent(power)}")
        elif power == -1:
            denominator.append(name)
        else:
            denominator.append(f"{name} ** {_exponent(power)}")
    if not numerator and not denominator:
        return "dimensionless"
    return " / ".join([" * ".join(numerator) or "1", *denominator])


def _dimensionality_message(exc: Any) -> str:
    """pint 0.23's ``DimensionalityError`` text, built from the error's containers."""
    units1, units2 = pint023_units(exc.units1.items()), pint023_units(exc.units2.items())
    if exc.dim1 or exc.dim2:
        dim1, dim2 = f" ({pint023_units(exc.dim1.items())})", f" ({pint023_units(exc.dim2.items())})"
    else:
        dim1 = dim2 = ""
    return f"Cannot convert from '{units1}'{dim1} to '{units2}'{dim2}{exc.extra_msg}"


def convert(amount: float, from_unit: str, to_unit: str) -> float:
    """``amount`` in ``from_unit`` expressed in ``to_unit``: an int when pint's result is exact, else a float."""
    pint = require("pint", "unit_conversion")
    registry = _registry()
    try:
        try:
            value = registry.Quantity(amount, from_unit).to(to_unit).magnitude
        except pint.errors.UndefinedUnitError:
            value = registry.Quantity(amount, from_unit.lower()).to(to_unit.lower()).magnitude
    except pint.errors.UndefinedUnitError as exc:
        raise UndefinedUnitError(str(exc)) from None
    except pint.errors.DimensionalityError as exc:
        raise DimensionalityError(_dimensionality_message(exc)) from None
    if isinstance(value, float) and type(value) is not float:  # numpy scalars: print as upstream's numpy 1 did
        return float(value)
    return value
