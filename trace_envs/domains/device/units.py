"""Unit conversion for ``unit_conversion``: a built-in table of common units, pint-style.

Upstream calls ``pint``: ``Quantity(amount, from_unit).to(to_unit).magnitude``, retrying with
lower-cased names when a unit is undefined. This table covers everyday units (length, mass, time,
volume, area, speed, energy, pressure, data, temperature) with pint's names, symbols and plurals,
and reproduces pint's errors and temperature offsets. Exact integer conversions stay ``int``.
"""

from __future__ import annotations

from fractions import Fraction

from .errors import DimensionalityError, UndefinedUnitError

F = Fraction

# canonical name -> (dimension, factor to the dimension's base unit as a Fraction)
_UNITS: dict[str, tuple[str, Fraction]] = {
    # length (base: meter)
    "meter": ("[length]", F(1)),
    "kilometer": ("[length]", F(1000)),
    "centimeter": ("[length]", F(1, 100)),
    "millimeter": ("[length]", F(1, 1000)),
    "micrometer": ("[length]", F(1, 10**6)),
    "nanometer": ("[length]", F(1, 10**9)),
    "inch": ("[length]", F(254, 10000)),
    "foot": ("[length]", F(3048, 10000)),
    "yard": ("[length]", F(9144, 10000)),
    "mile": ("[length]", F(1609344, 1000)),
    "nautical_mile": ("[length]", F(1852)),
    # mass (base: kilogram)
    "gram": ("[mass]", F(1, 1000)),
    "kilogram": ("[mass]", F(1)),
    "milligram": ("[mass]", F(1, 10**6)),
    "metric_ton": ("[mass]", F(1000)),
    "pound": ("[mass]", F(45359237, 10**8)),
    "ounce": ("[mass]", F(45359237, 16 * 10**8)),
    "stone": ("[mass]", F(14 * 45359237, 10**8)),
    # time (base: second)
    "second": ("[time]", F(1)),
    "millisecond": ("[time]", F(1, 1000)),
    "minute": ("[time]", F(60)),
    "hour": ("[time]", F(3600)),
    "day": ("[time]", F(86400)),
    "week": ("[time]", F(604800)),
    "year": ("[time]", F(31557600)),
    # volume (base: cubic meter)
    "liter": ("[length] ** 3", F(1, 1000)),
    "milliliter": ("[length] ** 3", F(1, 10**6)),
    "gallon": ("[length] ** 3", F(3785411784, 10**12)),
    "quart": ("[length] ** 3", F(3785411784, 4 * 10**12)),
    "pint": ("[length] ** 3", F(3785411784, 8 * 10**12)),
    "cup": ("[length] ** 3", F(3785411784, 16 * 10**12)),
    "fluid_ounce": ("[length] ** 3", F(3785411784, 128 * 10**12)),
    "tablespoon": ("[length] ** 3", F(3785411784, 256 * 10**12)),
    "teaspoon": ("[length] ** 3", F(3785411784, 768 * 10**12)),
    # area (base: square meter)
    "square_foot": ("[length] ** 2", F(3048, 10000) ** 2),
    "square_mile": ("[length] ** 2", F(1609344, 1000) ** 2),
    "acre": ("[length] ** 2", 43560 * F(1200, 3937) ** 2),  # pint: the US survey acre
    "hectare": ("[length] ** 2", F(10000)),
    # speed (base: meter per second)
    "meter_per_second": ("[length] / [time]", F(1)),
    "kilometer_per_hour": ("[length] / [time]", F(1000, 3600)),
    "mile_per_hour": ("[length] / [time]", F(1609344, 3600 * 1000)),
    "knot": ("[length] / [time]", F(1852, 3600)),
    # energy (base: joule)
    "joule": ("[length] ** 2 * [mass] / [time] ** 2", F(1)),
    "kilojoule": ("[length] ** 2 * [mass] / [time] ** 2", F(1000)),
    "calorie": ("[length] ** 2 * [mass] / [time] ** 2", F(4184, 1000)),
    "kilocalorie": ("[length] ** 2 * [mass] / [time] ** 2", F(4184)),
    "kilowatt_hour": ("[length] ** 2 * [mass] / [time] ** 2", F(3600000)),
    # pressure (base: pascal)
    "pascal": ("[mass] / [length] / [time] ** 2", F(1)),
    "kilopascal": ("[mass] / [length] / [time] ** 2", F(1000)),
    "bar": ("[mass] / [length] / [time] ** 2", F(100000)),
    "standard_atmosphere": ("[mass] / [length] / [time] ** 2", F(101325)),
    "pound_force_per_square_inch": (
        "[mass] / [length] / [time] ** 2",
        F(45359237 * 980665, 10**8 * 10**5) / F(254, 10000) ** 2,
    ),
    # information (base: bit)
    "bit": ("dimensionless", F(1)),
    "byte": ("dimensionless", F(8)),
    "kilobyte": ("dimensionless", F(8000)),
    "megabyte": ("dimensionless", F(8 * 10**6)),
    "gigabyte": ("dimensionless", F(8 * 10**9)),
}

# conversions pint computes in integers (int-defined units to their root unit): int in, int out
_INT_TO_ROOT: dict[str, tuple[str, int]] = {
    "nautical_mile": ("meter", 1852),
    "minute": ("second", 60),
    "hour": ("second", 3600),
    "day": ("second", 86400),
    "week": ("second", 604800),
    "byte": ("bit", 8),
}

# temperature: kelvin = value * scale + offset (pint's offset units)
_TEMPERATURES: dict[str, tuple[float, float]] = {
    "kelvin": (1.0, 0.0),
    "degree_Celsius": (1.0, 273.15),
    "degree_Fahrenheit": (5 / 9, 233.15 + 200 / 9),
    "degree_Rankine": (5 / 9, 0.0),
}

_ALIASES: dict[str, str] = {
    "m": "meter",
    "metre": "meter",
    "km": "kilometer",
    "kilometre": "kilometer",
    "cm": "centimeter",
    "centimetre": "centimeter",
    "mm": "millimeter",
    "millimetre": "millimeter",
    "um": "micrometer",
    "µm": "micrometer",
    "nm": "nanometer",
    "in": "inch",
    "ft": "foot",
    "feet": "foot",
    "yd": "yard",
    "mi": "mile",
    "nmi": "nautical_mile",
    "g": "gram",
    "kg": "kilogram",
    "mg": "milligram",
    "t": "metric_ton",
    "tonne": "metric_ton",
    "lb": "pound",
    "lbs": "pound",
    "oz": "ounce",
    "s": "second",
    "sec": "second",
    "ms": "millisecond",
    "min": "minute",
    "h": "hour",
    "hr": "hour",
    "d": "day",
    "a": "year",
    "l": "liter",
    "L": "liter",
    "litre": "liter",
    "ml": "milliliter",
    "mL": "milliliter",
    "millilitre": "milliliter",
    "gal": "gallon",
    "qt": "quart",
    "pt": "pint",
    "floz": "fluid_ounce",
    "tbsp": "tablespoon",
    "tsp": "teaspoon",
    "sq_ft": "square_foot",
    "ha": "hectare",
    "mps": "meter_per_second",
    "kph": "kilometer_per_hour",
    "mph": "mile_per_hour",
    "kt": "knot",
    "J": "joule",
    "kJ": "kilojoule",
    "cal": "calorie",
    "kcal": "kilocalorie",
    "Cal": "calorie",
    "kWh": "kilowatt_hour",
    "Pa": "pascal",
    "kPa": "kilopascal",
    "atm": "standard_atmosphere",
    "psi": "pound_force_per_square_inch",
    "atmosphere": "standard_atmosphere",
    "B": "byte",
    "kB": "kilobyte",
    "MB": "megabyte",
    "GB": "gigabyte",
    "K": "kelvin",
    "degK": "kelvin",
    "celsius": "degree_Celsius",
    "degC": "degree_Celsius",
    "°C": "degree_Celsius",
    "fahrenheit": "degree_Fahrenheit",
    "degF": "degree_Fahrenheit",
    "°F": "degree_Fahrenheit",
    "rankine": "degree_Rankine",
    "degR": "degree_Rankine",
}


def _lookup(name: str) -> str | None:
    key = name.strip().replace(" ", "_")
    for candidate in (key, key[:-1] if key.endswith("s") else None, key[:-2] if key.endswith("es") else None):
        if not candidate:
            continue
        if candidate in _UNITS or candidate in _TEMPERATURES:
            return candidate
        if candidate in _ALIASES:
            return _ALIASES[candidate]
    return None


def resolve_unit(name: str) -> str:
    """The canonical unit name, trying the name as given, then lower-cased (as upstream retries)."""
    found = _lookup(name)
    if found is None:
        found = _lookup(name.lower())
    if found is None:
        raise UndefinedUnitError(f"'{name}' is not defined in the unit registry")
    return found


def _dimension(unit: str) -> str:
    return "[temperature]" if unit in _TEMPERATURES else _UNITS[unit][0]


def convert(amount: float, from_unit: str, to_unit: str) -> float:
    """``amount`` in ``from_unit`` expressed in ``to_unit`` (int when exact and ``amount`` is an int)."""
    source, target = resolve_unit(from_unit), resolve_unit(to_unit)
    if _dimension(source) != _dimension(target):
        raise DimensionalityError(
            f"Cannot convert from '{source}' ({_dimension(source)}) to '{target}' ({_dimension(target)})"
        )
    if source in _TEMPERATURES:
        scale_from, offset_from = _TEMPERATURES[source]
        scale_to, offset_to = _TEMPERATURES[target]
        if source == target:
            return amount
        kelvin = amount * scale_from + offset_from
        return (kelvin - offset_to) / scale_to
    whole = isinstance(amount, int) and not isinstance(amount, bool)
    if whole and source == target:
        return amount
    if whole and _INT_TO_ROOT.get(source, ("", 0))[0] == target:
        return amount * _INT_TO_ROOT[source][1]
    return amount * (float(_UNITS[source][1]) / float(_UNITS[target][1]))
