"""Record what upstream ToolSandbox's ``unit_conversion`` and ``calculate_lat_lon_distance`` show the agent.

Not a test: run it once in a separate venv with upstream's pinned libraries, and commit the JSON it writes
(``device_reference.json``), which ``test_device_reference_libs.py`` compares the device tools against::

    python3.11 -m venv /tmp/upstream && /tmp/upstream/bin/pip install pint==0.23 "numpy==1.26.4" \
        geopy==2.4.1 geographiclib==2.0
    /tmp/upstream/bin/python tests/domains/data/make_device_reference.py

Each call is made the way upstream's tools make it (``pint.Quantity(amount, from_unit).to(to_unit)``,
retried once with both names lower-cased on an undefined unit; ``geopy.distance.distance(...).kilometers``)
and recorded as the agent sees it: the ``repr`` of the result or the exception's last traceback line.
The sample is drawn with a fixed seed from pint 0.23's own unit names.
"""

from __future__ import annotations

import json
import random
import traceback
from importlib.metadata import version
from pathlib import Path
from typing import Any

import geopy.distance
import pint

OUT = Path(__file__).with_name("device_reference.json")
AMOUNTS = [5, 2.5, 0.1, 1234.5678, -3, 100, 1, 0.3333, 98.6, 1e-06]
EVERYDAY = [  # groups of one dimension: every pair within a group is converted
    ["km/h", "m/s", "mile/hour", "mph", "kph", "kilometer per hour", "meter / second", "ft/s", "knot"],
    ["inch", "foot", "feet", "yard", "mile", "km", "cm", "mm", "meter", "nautical_mile"],
    ["ounce", "pound", "lbs", "kg", "gram", "stone", "ton", "metric_ton"],
    ["liter", "milliliter", "gallon", "quart", "pint", "cup", "fluid_ounce", "m**3", "cubic_foot", "tablespoon"],
    ["square meter", "m^2", "acre", "hectare", "sq_ft", "square_mile", "km**2"],
    ["N", "lbf", "kg*m/s^2", "dyne"],
    ["J", "kWh", "cal", "kcal", "BTU", "eV", "Wh"],
    ["W", "hp", "kW", "BTU/hour"],
    ["Pa", "psi", "atm", "bar", "mmHg", "kPa", "inHg"],
    ["second", "minute", "hour", "day", "week", "year", "month", "ms"],
    ["byte", "bit", "kB", "MB", "GB", "KiB", "MiB"],
    ["mpg", "km/L", "mile/gallon"],
    ["g/cm^3", "kg/m**3", "lb/ft**3"],
]
TEMPERATURES = ["celsius", "fahrenheit", "kelvin", "rankine", "degC", "degF", "Celsius", "FAHRENHEIT", "K"]


def console_line(call: Any) -> str:
    """What upstream's execution environment shows: ``repr(result)`` or the traceback's last line."""
    try:
        return repr(call())
    except Exception as exc:
        return traceback.format_exception_only(type(exc), exc)[-1].strip()


def upstream_unit_conversion(amount: float, from_unit: str, to_unit: str) -> float:
    try:
        return pint.Quantity(amount, from_unit).to(to_unit).magnitude
    except pint.errors.UndefinedUnitError:
        return pint.Quantity(amount, from_unit.lower()).to(to_unit.lower()).magnitude


def unit_kind(registry: Any, from_unit: str, to_unit: str) -> str:
    """``logarithmic`` / ``delta_temperature`` when either side uses such a unit, else ``ordinary``."""
    kinds = set()
    for text in (from_unit, to_unit, from_unit.lower(), to_unit.lower()):
        try:
            names = list(registry.parse_units(text)._units)
        except Exception:
            continue
        for name in names:
            base = registry.parse_unit_name(name)[0][1] if name not in registry._units else name
            if base.startswith("delta_"):
                kinds.add("delta_temperature")
            if type(registry._units[base].converter).__name__ == "LogarithmicConverter":
                kinds.add("logarithmic")
    return "logarithmic" if "logarithmic" in kinds else kinds.pop() if kinds else "ordinary"


def unit_cases(rng: random.Random) -> list[list[Any]]:
    registry = pint.get_application_registry()
    names = sorted(registry._units)
    by_dimension: dict[str, list[str]] = {}
    for name in names:
        try:
            by_dimension.setdefault(str(registry.get_dimensionality(name)), []).append(name)
        except Exception:  # a few definitions cannot be reduced to dimensions
            continue
    dimensions = sorted(d for d, members in by_dimension.items() if len(members) > 1)
    pairs = [tuple(rng.sample(by_dimension[rng.choice(dimensions)], 2)) for _ in range(900)]
    pairs += [(rng.choice(names), rng.choice(names)) for _ in range(100)]
    everyday = [unit for group in EVERYDAY for unit in group]
    pairs += [(a, b) for group in EVERYDAY for a in group for b in group if a != b]
    pairs += [(a, b) for a in everyday for b in everyday if rng.random() < 0.02]
    pairs += [(a, b) for a in TEMPERATURES for b in TEMPERATURES]
    for _ in range(200):  # surface forms: upper case, capitalised, plural
        a, b = rng.sample(by_dimension[rng.choice(dimensions)], 2)
        vary = [str.upper, str.capitalize, lambda s: s + "s", str.title]
        pairs.append((rng.choice(vary)(a), rng.choice(vary)(b)))
    pairs += [("Foo", "meter"), ("meter", "Foo"), ("foo", "bar"), ("", "meter"), ("KM", "Miles"), ("liter", "gallon")]
    cases = []
    for a, b in pairs:
        amount = rng.choice(AMOUNTS)
        line = console_line(lambda a=a, b=b, amount=amount: upstream_unit_conversion(amount, a, b))
        cases.append([amount, a, b, line, unit_kind(registry, a, b)])
    return cases


def distance_cases(rng: random.Random) -> list[list[Any]]:
    points: list[tuple[float, float, float, float]] = []
    for _ in range(300):
        points.append((rng.uniform(-90, 90), rng.uniform(-180, 180), rng.uniform(-90, 90), rng.uniform(-180, 180)))
    for _ in range(150):  # nearby places, as in the scenarios
        lat, lon = rng.uniform(-60, 60), rng.uniform(-170, 170)
        points.append((lat, lon, lat + rng.uniform(-0.5, 0.5), lon + rng.uniform(-0.5, 0.5)))
    for _ in range(50):  # nearly antipodal, where Vincenty's iteration fails to converge
        lat, lon = rng.uniform(-60, 60), rng.uniform(-170, 170)
        antipode = (lon + 360 + rng.uniform(-0.01, 0.01)) % 360 - 180  # lon + 180, kept in [-180, 180)
        points.append((lat, lon, -lat + rng.uniform(-0.01, 0.01), antipode))
    points += [
        (0, 0, 0, 0),
        (90, 0, -90, 0),
        (0, 0, 0, 180),
        (37.334606, -122.009102, 37.3237926356735, -122.03961770355414),
    ]
    return [[*p, console_line(lambda p=p: geopy.distance.distance(p[:2], p[2:]).kilometers)] for p in points]


def main() -> None:
    rng = random.Random(13)
    data = {
        "libraries": {name: version(name) for name in ("pint", "numpy", "geopy", "geographiclib")},
        "unit_conversion": unit_cases(rng),
        "calculate_lat_lon_distance": distance_cases(rng),
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(data['unit_conversion'])} conversions, {len(data['calculate_lat_lon_distance'])} distances")


if __name__ == "__main__":
    main()
