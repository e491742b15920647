"""Argument checks of the device tools, with ToolSandbox's exception types and messages.

Type checking follows upstream's ``typechecked`` decorator: a value passes if its exact type is one
of the annotated types, ``int`` also passes where ``float`` is allowed and ``bool`` where ``int`` or
``float`` is; ``float`` never passes for ``int``.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterable
from typing import Any, Union, get_args, get_origin

from .errors import NotGiven, NumberParseException

MIN_TIMESTAMP = 315529200.0
MAX_TIMESTAMP = 2524604400.0

_NOTGIVEN_PATH = "tool_sandbox.common.utils.NotGiven"


def union_members(annotation: Any) -> tuple[Any, ...]:
    """The member types of an annotation (a plain type is a one-member union)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members: list[Any] = []
        for arg in get_args(annotation):
            members.extend(union_members(arg))
        return tuple(dict.fromkeys(members))
    return (annotation,)


def _name(member: Any) -> str:
    if member is type(None):
        return "NoneType"
    if member is NotGiven:
        return _NOTGIVEN_PATH
    return str(getattr(member, "__name__", member))


def annotation_text(annotation: Any) -> str:
    """How upstream's error message prints an annotation (Python 3.11 ``typing`` reprs)."""
    members = union_members(annotation)
    if len(members) == 1:
        member = members[0]
        return "<class 'NoneType'>" if member is type(None) else f"<class '{_name(member)}'>"
    if len(members) == 2 and type(None) in members:
        other = next(m for m in members if m is not type(None))
        return f"typing.Optional[{_name(other)}]"
    return "typing.Union[" + ", ".join(_name(m) for m in members) + "]"


def type_ok(value: Any, annotation: Any) -> bool:
    """Upstream's acceptance rule for one value against one annotation."""
    members = union_members(annotation)
    kind = type(value)
    if kind in members:
        return True
    if kind is int and float in members:
        return True
    return kind is bool and (int in members or float in members)


def check_type(name: str, value: Any, annotation: Any) -> None:
    if not type_ok(value, annotation):
        raise TypeError(f"Parameter '{name}' is of type '{type(value)}', but expected '{annotation_text(annotation)}'.")


def check_range(name: str, value: Any, minimum: float, maximum: float) -> None:
    """Range check applied after the type check; ``None`` and NOT_GIVEN are skipped."""
    if value is None or isinstance(value, NotGiven):
        return
    if value < minimum:
        raise ValueError(f"Parameter '{name}' is smaller than its valid range minimum of {minimum}.")
    if value > maximum:
        raise ValueError(f"Parameter '{name}' is larger than its valid range maximum of {maximum}.")


def check_timestamp(name: str, value: Any) -> None:
    check_range(name, value, MIN_TIMESTAMP, MAX_TIMESTAMP)


def check_latitude(name: str, value: Any) -> None:
    check_range(name, value, -90.0, 90.0)  # float bounds: the error prints "90.0" as upstream's does


def check_longitude(name: str, value: Any) -> None:
    check_range(name, value, -180.0, 180.0)


# ----- phone numbers ---------------------------------------------------------------------------
# Country calling codes that phonenumbers knows (ITU-T E.164 assignments, incl. non-geographic ones).
_COUNTRY_CODES: frozenset[int] = frozenset(
    [
        1,
        7,
        20,
        27,
        30,
        31,
        32,
        33,
        34,
        36,
        39,
        40,
        41,
        43,
        44,
        45,
        46,
        47,
        48,
        49,
        51,
        52,
        53,
        54,
        55,
        56,
        57,
        58,
        60,
        61,
        62,
        63,
        64,
        65,
        66,
        81,
        82,
        84,
        86,
        90,
        91,
        92,
        93,
        94,
        95,
        98,
        211,
        212,
        213,
        216,
        218,
        *list(range(220, 259)),
        *list(range(260, 270)),
        290,
        291,
        297,
        298,
        299,
        *list(range(350, 360)),
        *list(range(370, 384)),
        385,
        386,
        387,
        389,
        420,
        421,
        423,
        *list(range(500, 510)),
        *list(range(590, 600)),
        670,
        672,
        673,
        674,
        675,
        676,
        677,
        678,
        679,
        680,
        681,
        682,
        683,
        685,
        686,
        687,
        688,
        689,
        690,
        691,
        692,
        800,
        808,
        850,
        852,
        853,
        855,
        856,
        870,
        878,
        880,
        881,
        882,
        883,
        886,
        888,
        *list(range(960, 969)),
        970,
        971,
        972,
        973,
        974,
        975,
        976,
        977,
        979,
        992,
        993,
        994,
        995,
        996,
        998,
    ]
)
_VALID_START = re.compile(r"[+＋\d]")
_UNWANTED_END = re.compile(r"[^\d\w#]+$", re.UNICODE)
_VIABLE = re.compile(
    r"^(?:\d{2}|[+＋]*(?:[-x‐-―−ー－-／  ­​⁠　()（）［］.\[\]/~⁓∼～*]*\d){3,}[-x‐-―−ー－-／  ­​⁠　()（）［］.\[\]/~⁓∼～*\w]*)$"
)


def validate_phone_number(number: str) -> None:
    """Parse a phone number the way ``phonenumbers.parse(number)`` does without a default region.

    Only parsing is checked (upstream never validates or reformats numbers): the number must be
    viable and start with ``+`` and a known country calling code.
    """
    start = _VALID_START.search(number)
    candidate = _UNWANTED_END.sub("", number[start.start() :]) if start else ""
    if len(candidate) < 2 or not _VIABLE.match(candidate):
        raise NumberParseException("(1) The string supplied did not seem to be a phone number.")
    if candidate[0] not in "+＋":
        raise NumberParseException("(0) Missing or invalid default region.")
    digits = "".join(ch for ch in candidate if ch.isdigit())
    for length in (1, 2, 3):
        if len(digits) >= length and int(digits[:length]) in _COUNTRY_CODES and digits[0] != "0":
            national = digits[length:]
            break
    else:
        raise NumberParseException("(0) Could not interpret numbers after plus-sign.")
    if len(national) < 2:
        raise NumberParseException("(3) The string supplied is too short to be a phone number.")
    if len(national) > 17:
        raise NumberParseException("(4) The string supplied is too long to be a phone number.")


# ----- currencies --------------------------------------------------------------------------------
ISO_4217: frozenset[str] = frozenset(
    [
        "AED",
        "AFN",
        "ALL",
        "AMD",
        "ANG",
        "AOA",
        "ARS",
        "AUD",
        "AWG",
        "AZN",
        "BAM",
        "BBD",
        "BDT",
        "BGN",
        "BHD",
        "BIF",
        "BMD",
        "BND",
        "BOB",
        "BRL",
        "BSD",
        "BTN",
        "BWP",
        "BYN",
        "BZD",
        "CAD",
        "CDF",
        "CHF",
        "CLP",
        "CNY",
        "COP",
        "CRC",
        "CUP",
        "CVE",
        "CZK",
        "DJF",
        "DKK",
        "DOP",
        "DZD",
        "EGP",
        "ERN",
        "ETB",
        "EUR",
        "FJD",
        "FKP",
        "GBP",
        "GEL",
        "GHS",
        "GIP",
        "GMD",
        "GNF",
        "GTQ",
        "GYD",
        "HKD",
        "HNL",
        "HTG",
        "HUF",
        "IDR",
        "ILS",
        "INR",
        "IQD",
        "IRR",
        "ISK",
        "JMD",
        "JOD",
        "JPY",
        "KES",
        "KGS",
        "KHR",
        "KMF",
        "KPW",
        "KRW",
        "KWD",
        "KYD",
        "KZT",
        "LAK",
        "LBP",
        "LKR",
        "LRD",
        "LSL",
        "LYD",
        "MAD",
        "MDL",
        "MGA",
        "MKD",
        "MMK",
        "MNT",
        "MOP",
        "MRU",
        "MUR",
        "MVR",
        "MWK",
        "MXN",
        "MYR",
        "MZN",
        "NAD",
        "NGN",
        "NIO",
        "NOK",
        "NPR",
        "NZD",
        "OMR",
        "PAB",
        "PEN",
        "PGK",
        "PHP",
        "PKR",
        "PLN",
        "PYG",
        "QAR",
        "RON",
        "RSD",
        "RUB",
        "RWF",
        "SAR",
        "SBD",
        "SCR",
        "SDG",
        "SEK",
        "SGD",
        "SHP",
        "SLE",
        "SOS",
        "SRD",
        "SSP",
        "STN",
        "SVC",
        "SYP",
        "SZL",
        "THB",
        "TJS",
        "TMT",
        "TND",
        "TOP",
        "TRY",
        "TTD",
        "TWD",
        "TZS",
        "UAH",
        "UGX",
        "USD",
        "UYU",
        "UZS",
        "VES",
        "VND",
        "VUV",
        "WST",
        "XAF",
        "XCD",
        "XOF",
        "XPF",
        "YER",
        "ZAR",
        "ZMW",
        "ZWL",
    ]
)


def validate_currency_code(code: str) -> None:
    if code.upper() not in ISO_4217:
        raise ValueError(f"{code} is not a known 3 letter ISO 4217 currency code")


def check_types(values: dict[str, Any], hints: dict[str, Any], names: Iterable[str] | None = None) -> None:
    """Type-check the named arguments (all of ``values`` by default) in signature order."""
    for name in names if names is not None else values:
        check_type(name, values[name], hints[name])


def resolved_hints(fn: Any) -> dict[str, Any]:
    """Type hints of a tool function with its string annotations resolved."""
    return typing.get_type_hints(fn)
