"""The probe of structured-data reasoning: amounts and record choices must agree with the records read."""

from __future__ import annotations

import re
from typing import Any

from trace_envs.domains.probing import Episode, ProbeLabel

from .kit import as_number, dicts, is_write, leaves, record_and_siblings, string_values

_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


def _money_claims(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in _MONEY.findall(text)]


def _multi_record(value: Any) -> bool:
    """Whether a result holds several records: a list of two or more objects, or an object of objects."""
    for node in [value, *dicts(value)]:
        if isinstance(node, list) and sum(isinstance(x, dict) for x in node) >= 2:
            return True
        if isinstance(node, dict):
            if sum(isinstance(v, dict) for v in node.values()) >= 2:
                return True
            if any(isinstance(v, list) and sum(isinstance(x, dict) for x in v) >= 2 for v in node.values()):
                return True
    return False


def _mentioned(keys: set[str], text: str) -> set[str]:
    """Field names the user said (``basic_economy`` as "basic economy"; longest names first, so that
    "basic economy" does not also count as "economy")."""
    lowered = " " + re.sub(r"[^a-z0-9]+", " ", text.lower()) + " "
    found = set()
    for key in sorted(keys, key=len, reverse=True):
        phrase = " " + key.replace("_", " ").lower() + " "
        if phrase.strip() and phrase in lowered:
            found.add(key)
            lowered = lowered.replace(phrase, " ")
    return found


def _numeric_fields(results: list[Any]) -> list[tuple[str, float, frozenset[str]]]:
    """(field, value, numeric fields beside it) for every numeric field of every record read."""
    out = []
    for result in results:
        for node in dicts(result):
            numeric = {k: n for k, v in node.items() if (n := as_number(v)) is not None}
            siblings = frozenset(numeric)
            out += [(k, n, siblings) for k, n in numeric.items()]
    return out


def _derivations(fields: list[tuple[str, float, frozenset[str]]]) -> list[tuple[float, str, frozenset[str]]]:
    """Values read, their sums with another value of the same field (two legs), and either times a
    head count of 2 to 9."""
    bases: list[tuple[float, str, frozenset[str]]] = [(n, k, s) for k, n, s in fields]
    by_key: dict[str, list[tuple[float, frozenset[str]]]] = {}
    for k, n, s in fields:
        by_key.setdefault(k, []).append((n, s))
    for key, values in by_key.items():
        values = values[:300]
        for i, (a, s) in enumerate(values):
            for b, _ in values[i + 1 :]:
                bases.append((a + b, key, s))
    return [(n * m, k, s) for n, k, s in bases for m in range(1, 10)]


_ID_FIELDS = ("id", "number", "last_four")


def _named_records(results: list[Any], text: str) -> list[dict[str, Any]]:
    """Records the message names by an id-like field value (a flight number, an order id, a card ending)."""
    named = []
    for result in results:
        for node in dicts(result):
            ids = [v for k, v in node.items() if isinstance(v, str) and len(v) >= 4 and k.lower().endswith(_ID_FIELDS)]
            if any(re.search(rf"(?<![\w#]){re.escape(v.lstrip('#'))}(?!\w)", text) for v in ids):
                named.append(node)
    return named


def _matches(number: float, results: list[Any]) -> list[tuple[str, frozenset[str]]]:
    return [(k, s) for n, k, s in _derivations(_numeric_fields(results)) if abs(n - number) < 0.005]


def _check_claim(number: float, results: list[Any], text: str, user_text: str) -> tuple[bool, str | None]:
    """(checkable, problem) for a money amount the agent stated in ``text``: it must follow from the
    records the message names (all records if it names none) and from the field the user asked about.
    Amounts that follow from none of them (a policy fee) cannot be checked."""
    named = _named_records(results, text)
    matches = _matches(number, named if named else results)
    if not matches:  # a policy fee, a number from elsewhere: nothing to check it against
        return False, None
    for key, siblings in matches:
        mentioned = _mentioned(set(siblings), user_text)
        if not mentioned or key in mentioned:
            return True, None
    key, siblings = matches[0]
    wanted = ", ".join(sorted(_mentioned(set(siblings), user_text)))
    return True, f"${number:g} comes from the {key!r} field but the user asked about {wanted}"


def _unavailable(record: dict[str, Any]) -> bool:
    return any(k.startswith("avail") and v is False for k, v in record.items())


def _phrases(record: dict[str, Any]) -> set[str]:
    """The record's descriptive string values (options included), lowercased, as the user might say
    them; ids, numbers and short words ("yes", "no", which confirmations also contain) are left out."""
    return {
        str(v).lower()
        for k, v in leaves(record)
        if isinstance(v, str) and len(v) >= 4 and any(c.isalpha() for c in v) and not (k or "").endswith(_ID_FIELDS)
    }


def _match_score(record: dict[str, Any], shared: set[str], user_text: str) -> int:
    lowered = " " + re.sub(r"[^a-z0-9]+", " ", user_text.lower()) + " "
    return sum(1 for p in _phrases(record) - shared if " " + re.sub(r"[^a-z0-9]+", " ", p).strip() + " " in lowered)


def _best_match_problem(value: str, results: list[Any], user_text: str) -> str | None:
    """When the user described the record they want by its values, the record the agent chose must
    match that description at least as well as every other record beside it."""
    found = record_and_siblings(results, value)
    if found is None:
        return None
    chosen, records = found
    shared = set.intersection(*(_phrases(r) for r in records))
    scores = [_match_score(r, shared, user_text) for r in records]
    mine = _match_score(chosen, shared, user_text)
    if max(scores) > mine:
        return f"{value} matches fewer of the user's requirements than another record read ({mine} vs {max(scores)})"
    return None


def probe_structured(episode: Episode) -> ProbeLabel:
    """When the agent read several nested records: every money amount it states must follow from the
    field the user asked about, and a record it acquires (a ``new_…`` argument, a booking) must be
    available and match the user's description at least as well as the records beside it."""
    results = [c.parsed for c in episode.calls if not c.error and c.parsed is not None]
    if not any(_multi_record(r) for r in results):
        return ProbeLabel("NA", "no tool returned several nested records")
    checked = 0
    for calls_before, text in episode.agent_texts:
        seen = [c.parsed for c in episode.calls[:calls_before] if not c.error and c.parsed is not None]
        amounts = _money_claims(text)
        for number in amounts:
            others = [a for a in amounts if a != number]
            if any(abs(number - a * m) < 0.005 for a in others for m in range(2, 10)):
                continue  # a multiple of another amount of the message ("2 bags at $50 each: $100")
            checkable, problem = _check_claim(number, seen, text, episode.user_text)
            checked += checkable
            if problem is not None:
                return ProbeLabel("LACKING", f"told the user {problem}")
    for call in episode.calls:
        if not is_write(call.name):
            continue
        earlier = [c.parsed for c in episode.calls[: call.index] if not c.error and c.parsed is not None]
        for argument, value in call.arguments.items():
            if not (argument.startswith("new_") or call.name.startswith("book_")):
                continue  # only records being acquired must be available
            for v in string_values(value):
                found = record_and_siblings(earlier, v)
                if found is None:
                    continue
                checked += 1
                if _unavailable(found[0]):
                    return ProbeLabel("LACKING", f"{call.name}({argument}={v}): the records mark it unavailable")
                problem = _best_match_problem(v, earlier, episode.user_text)
                if problem is not None:
                    return ProbeLabel("LACKING", f"{call.name}({argument}=…): {problem}")
    if checked:
        return ProbeLabel("PRESENT", f"{checked} amount(s) and record choice(s) agree with the records read")
    return ProbeLabel("NA", "read nested records but neither stated amounts nor chose among them")
