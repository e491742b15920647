"""Cross-checks of the pure-Python stand-ins against the libraries upstream ToolSandbox uses.

Each test runs only where that library is installed (they are not dependencies of trace-envs):
``pip install rapidfuzz==3.9.3 holidays==0.51 phonenumbers==8.13.39 pint==0.23 "numpy<2" rouge-score==0.1.2 geopy==2.4.1``.
"""

from __future__ import annotations

import itertools
import random

import pytest

from trace_envs.domains.device import fuzzy
from trace_envs.domains.device.errors import DimensionalityError, NumberParseException, UndefinedUnitError
from trace_envs.domains.device.holidays import us_holidays
from trace_envs.domains.device.tools.utilities import _vincenty_km
from trace_envs.domains.device.units import _ALIASES, _TEMPERATURES, _UNITS, convert
from trace_envs.domains.device.validators import validate_phone_number
from trace_envs.targets.device.rouge import rouge_l

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
    rapidfuzz = pytest.importorskip("rapidfuzz")
    fuzz, utils, process = rapidfuzz.fuzz, rapidfuzz.utils, rapidfuzz.process
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
    holidays = pytest.importorskip("holidays")
    for year in range(1990, 2051):
        assert us_holidays(year) == sorted(holidays.US(years=year).items()), year


def test_phone_parsing_equals_phonenumbers() -> None:
    phonenumbers = pytest.importorskip("phonenumbers")
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


def test_unit_conversion_equals_pint() -> None:
    pint = pytest.importorskip("pint")
    registry = pint.UnitRegistry()
    names = [*_UNITS, *_TEMPERATURES, *_ALIASES, "meters", "miles", "feet", "Celsius", "KM", "foo"]
    for source, target in itertools.product(names, names):
        for amount in (5, 2.5):
            try:
                try:
                    quantity = registry.Quantity(amount, source)
                except pint.errors.UndefinedUnitError:
                    quantity = registry.Quantity(amount, source.lower())
                try:
                    theirs: object = quantity.to(target).magnitude
                except pint.errors.UndefinedUnitError:
                    theirs = quantity.to(target.lower()).magnitude
            except (pint.errors.UndefinedUnitError, pint.errors.DimensionalityError) as exc:
                theirs = f"{type(exc).__name__}: {exc}"
            try:
                ours: object = convert(amount, source, target)
            except (UndefinedUnitError, DimensionalityError) as exc:
                ours = f"{type(exc).__name__}: {exc}"
            assert type(ours) is type(theirs), (source, target, amount, theirs, ours)
            if isinstance(theirs, float):
                assert ours == pytest.approx(theirs, rel=1e-9), (source, target, amount)
            else:
                assert ours == theirs, (source, target, amount)


def test_rouge_l_equals_rouge_score() -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    extra = ["the", "wifi", "is", "turned", "off", "I", "have", "running", "happily", "agreed", "days", "flying"]
    vocabulary = [*WORDS, *extra, "used", "possibly"]
    rng = random.Random(0)
    for _ in range(1500):
        a = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 10)))
        b = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 10)))
        assert rouge_l(a, b) == pytest.approx(scorer.score(a, b)["rougeL"].fmeasure, abs=1e-12), (a, b)


def test_distance_equals_geopy_geodesic() -> None:
    distance = pytest.importorskip("geopy.distance")
    rng = random.Random(0)
    for _ in range(1000):
        a = (rng.uniform(-89, 89), rng.uniform(-179, 179))
        b = (rng.uniform(-89, 89), rng.uniform(-179, 179))
        assert _vincenty_km(*a, *b) == pytest.approx(distance.geodesic(a, b).km, rel=1e-6)
