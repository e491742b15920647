"""The device tools against upstream ToolSandbox's libraries.

* The pure-Python stand-ins (fuzzy matching, US holidays, phone parsing, ROUGE-L) against upstream's own
  versions of rapidfuzz, holidays, phonenumbers and rouge-score, which the ``dev`` extra installs so that
  these run in CI (a missing one fails the import here rather than skipping).
* ``unit_conversion`` and ``calculate_lat_lon_distance``, which call pint and geopy, against what upstream's
  pinned pint 0.23 and geopy 2.4.1 answered (recorded in ``data/device_reference.json`` by
  ``data/make_device_reference.py``; pint 0.23 itself cannot be installed beside numpy 2).
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import phonenumbers
import pytest
from rapidfuzz import fuzz, process, utils
from rouge_score import rouge_scorer

from trace_envs.core import ToolCall
from trace_envs.domains.device import FULL_TOOLSET, build_base_world, fuzzy
from trace_envs.domains.device.errors import NumberParseException
from trace_envs.domains.device.holidays import us_holidays
from trace_envs.domains.device.validators import validate_phone_number
from trace_envs.targets.device.rouge import rouge_l

with warnings.catch_warnings():  # holidays 0.51 announces its 1.0 versioning policy when imported
    warnings.simplefilter("ignore")
    import holidays

REFERENCE = json.loads((Path(__file__).parent / "data" / "device_reference.json").read_text(encoding="utf-8"))
LAT_LON = ("latitude_0", "longitude_0", "latitude_1", "longitude_1")

WORDS = [
    "fredrik", "thordendal", "john", "petrucci", "homer", "tomas", "haake", "boss", "friend", "self", "buy", "tickets",
    "merrily", "next", "week", "company", "sf", "navy", "bathing", "dress", "hey", "kid", "gpu", "leave", "me",
    "alone", "good", "keep", "posted", "christmas", "day", "observed", "thanksgiving", "labor",
]  # fmt: skip


def _pairs(rng: random.Random, count: int) -> list[tuple[str, str]]:
    pairs = []
    for index in range(count):
        if index % 2:
            a = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
            b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        else:
            a = "".join(rng.choice("abcde ") for _ in range(rng.randint(1, 40)))
            b = "".join(rng.choice("abcde ") for _ in range(rng.randint(1, 90)))
        pairs.append((a, b))
    return pairs


def test_fuzzy_scores_equal_rapidfuzz() -> None:
    for a, b in _pairs(random.Random(0), 1500):
        a, b = utils.default_process(a), utils.default_process(b)
        assert fuzzy.wratio(a, b) == pytest.approx(fuzz.WRatio(a, b), abs=1e-9), (a, b)
        assert fuzzy.partial_ratio(a, b) == pytest.approx(fuzz.partial_ratio(a, b), abs=1e-9), (a, b)
        assert fuzzy.token_set_ratio(a, b) == pytest.approx(fuzz.token_set_ratio(a, b), abs=1e-9), (a, b)
    choices = ["Fredrik Thordendal", "John Petrucci", "Homer S", None, "Fred", "Homer Simpson"]
    for query in ("Fredrik", "john", "homer", "S"):
        theirs = process.extract(query, choices, scorer=fuzz.WRatio, processor=utils.default_process, score_cutoff=50)
        assert [(c, i) for c, _, i in fuzzy.extract(query, choices, score_cutoff=50)] == [(c, i) for c, _, i in theirs]


def test_us_holidays_equal_python_holidays() -> None:
    for year in range(1990, 2051):
        assert us_holidays(year) == sorted(holidays.US(years=year).items()), year


def test_phone_parsing_equals_phonenumbers() -> None:
    rng = random.Random(0)
    samples = ["", "+", "+12", "+1234", "bad", "1234567890", "+999 123456", "+1 245-334-4098", "+441", "+33 1"]
    samples += ["".join(rng.choice("+0123456789 -()") for _ in range(rng.randint(0, 16))) for _ in range(1500)]
    for number in samples:
        try:
            phonenumbers.parse(number)
            theirs = "ok"
        except phonenumbers.NumberParseException as exc:
            theirs = str(exc)
        try:
            validate_phone_number(number)
            ours = "ok"
        except NumberParseException as exc:
            ours = str(exc)
        assert ours == theirs, number


def _shown(name: str, **arguments: Any) -> str:
    """What the agent sees for one call: the result's repr or the exception line."""
    state = build_base_world()
    return FULL_TOOLSET.execute(state, ToolCall(id="c", name=name, arguments=arguments)).result.content


def test_unit_conversion_equals_upstream_pint() -> None:
    assert REFERENCE["libraries"]["pint"] == "0.23"
    cases = REFERENCE["unit_conversion"]
    ordinary = [case for case in cases if case[4] == "ordinary"]
    assert len(ordinary) > 1900
    different = [
        (amount, source, target, upstream, ours)
        for amount, source, target, upstream, _ in ordinary
        if (ours := _shown("unit_conversion", amount=amount, from_unit=source, to_unit=target)) != upstream
    ]
    assert different == []


def test_unit_conversion_upstream_examples() -> None:
    """The issue's cases: compound units, last digits, the lower-cased retry's error, int results."""
    assert _shown("unit_conversion", amount=60, from_unit="mph", to_unit="km/h") == "96.56064"
    assert _shown("unit_conversion", amount=2.5, from_unit="m/s", to_unit="mph") == "5.592340730136005"
    assert _shown("unit_conversion", amount=1, from_unit="liter", to_unit="gallon") == "0.26417205235814856"
    assert _shown("unit_conversion", amount=100, from_unit="celsius", to_unit="fahrenheit") == "211.99999999999991"
    assert _shown("unit_conversion", amount=5, from_unit="meter", to_unit="meter") == "5"
    unknown = "pint.errors.UndefinedUnitError: 'foo' is not defined in the unit registry"
    assert _shown("unit_conversion", amount=1, from_unit="Foo", to_unit="meter") == unknown
    assert _shown("unit_conversion", amount=1, from_unit="meter", to_unit="Foo") == unknown
    assert _shown("unit_conversion", amount=1, from_unit="m*kg/s**2/K", to_unit="mol") == (
        "pint.errors.DimensionalityError: Cannot convert from 'kilogram * meter / kelvin / second ** 2' "
        "([length] * [mass] / [temperature] / [time] ** 2) to 'mole' ([substance])"
    )


def test_rouge_l_equals_rouge_score() -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    extra = ["the", "wifi", "is", "turned", "off", "I", "have", "running", "happily", "agreed", "days", "flying"]
    vocabulary = [*WORDS, *extra, "used", "possibly"]
    rng = random.Random(0)
    for _ in range(1500):
        a = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 10)))
        b = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 10)))
        assert rouge_l(a, b) == pytest.approx(scorer.score(a, b)["rougeL"].fmeasure, abs=1e-12), (a, b)


def test_distance_equals_upstream_geopy() -> None:
    assert REFERENCE["libraries"]["geopy"] == "2.4.1"
    cases = REFERENCE["calculate_lat_lon_distance"]
    assert len(cases) > 500
    different = [
        (case, ours)
        for *case, upstream in cases
        if (ours := _shown("calculate_lat_lon_distance", **dict(zip(LAT_LON, case, strict=True)))) != upstream
    ]
    assert different == []
