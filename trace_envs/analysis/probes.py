"""Offline probes: programmatic labellers for the six shipped capabilities (each capability's declaration,
on its env, points at its probe here; see :mod:`trace_envs.capabilities`). Each reads only what
the agent did (messages, tool calls with arguments, tool results and errors) - never the env id,
the policy, the task id or the outcome - and returns NA / PRESENT / LACKING with a rationale.

They make the pipeline runnable without a model (analyst ``probes``) and let an analyst's labels be
checked against them (:mod:`trace_envs.analysis.agreement`). They are heuristics with known blind
spots (see docs/analysis.md), deliberately specific: a probe fires on the failure pattern of its
capability and stays NA where that pattern cannot occur.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from trace_envs.core.capability import LabelLike, Probe, ProbeLabel
from trace_envs.core.episode import Episode, read_messages
from trace_envs.rollout.store import EpisodeRecord

from .models import CapabilityLabel, Label

_WRITE_PREFIXES = (
    "cancel_", "modify_", "update_", "book_", "set_", "add_", "remove_", "send_", "return_", "exchange_",
    "create_", "delete_", "transfer_",
)  # fmt: skip
_DATE_PARTS = ("year", "month", "day")


@cache
def tool_kinds() -> dict[str, str]:
    """``read`` / ``write`` / ``generic`` of every tool of the registered domains, by name."""
    import trace_envs  # noqa: F401 - registers the built-in domains and the plugins' ones
    from trace_envs.core.domain import get_domain, registered_domains

    kinds: dict[str, str] = {}
    for name in registered_domains():
        try:
            domain = get_domain(name)
        except Exception:  # a domain that fails to import is simply not consulted
            continue
        for tool_name in domain.toolset:
            kinds.setdefault(tool_name, domain.toolset[tool_name].kind)
    return kinds


def is_write(name: str) -> bool:
    """Whether a tool changes state (its domain's declared kind, else a name-prefix guess)."""
    kind = tool_kinds().get(name)
    return kind == "write" if kind is not None else name.startswith(_WRITE_PREFIXES)


def read_episode(record: EpisodeRecord) -> Episode:
    """The probes' view of a stored episode (core's :func:`~trace_envs.core.episode.read_messages`)."""
    return read_messages(record.messages)


# ----- walking JSON values ------------------------------------------------------------------------
def _leaves(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """(key, scalar) for every scalar in a JSON value (list items inherit their list's key)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    else:
        yield key, value


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _dicts(v)
    elif isinstance(value, list):
        for item in value:
            yield from _dicts(item)


def _values_under(value: Any, keys: set[str]) -> set[str]:
    return {str(v) for k, v in _leaves(value) if k in keys and v is not None}


def _all_scalars(value: Any) -> set[str]:
    out: set[str] = set()
    for key, v in _leaves(value):
        if v is not None:
            out.add(str(v))
        if key is not None:
            out.add(key)
    return out


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _as_number(value: Any) -> float | None:
    """A numeric leaf (numbers, and strings made of digits such as ``"0273"``) as a float."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()):
        return float(value)
    return None


def _numbers(value: Any, raw: str | None = None) -> list[float]:
    out = [n for _, v in _leaves(value) if (n := _as_number(v)) is not None]
    if value is None and raw:
        out += [float(m) for m in _NUMBER.findall(raw)]
    return out


# ----- precondition_verification ---------------------------------------------------------------------
def probe_precondition(episode: Episode) -> ProbeLabel:
    """A write aimed at a record (an ``…_id`` argument) must come after a read of that record: a read
    call with the id among its arguments, or a search/find result that returned it."""
    checked = 0
    for call in episode.calls:
        if not is_write(call.name):
            continue
        ids = [(k, v) for k, v in call.arguments.items() if k.endswith("_id") and isinstance(v, str) and v]
        if not ids:
            continue
        key, target = ids[0]
        checked += 1
        looked_up = False
        for before in episode.calls[: call.index]:
            if before.error or is_write(before.name):
                continue
            in_arguments = target in {str(v) for v in before.arguments.values()}
            found = before.name.startswith(("search", "find")) and target in _all_scalars(before.parsed)
            looked_up = looked_up or in_arguments or found
        if not looked_up:
            return ProbeLabel("LACKING", f"{call.name}({key}={target}) made without first looking up {target}")
    if not checked:
        return ProbeLabel("NA", "no state-changing call aimed at a record")
    return ProbeLabel("PRESENT", f"each of {checked} record-changing call(s) followed a lookup of the record")


# ----- tool_calling_precision ------------------------------------------------------------------------
def _candidate_keys(argument: str) -> set[str]:
    keys = {argument}
    if argument.endswith("s"):
        keys.add(argument[:-1])
    return keys


def _string_values(value: Any) -> list[str]:
    """Strings of an argument: itself, the items of a list, the string fields of listed objects."""
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                out += [v for v in item.values() if isinstance(v, str)]
    return out


def _siblings(results: list[Any], value: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The record holding ``value`` as an id (a field value, or its key in an object of objects) and
    the records beside it in the same container."""
    for result in results:
        containers: list[list[dict[str, Any]]] = []
        for node in [result, *_dicts(result)]:
            if isinstance(node, dict):
                records = [v for v in node.values() if isinstance(v, dict)]
                if len(records) >= 2:
                    containers.append(records)
                for v in node.values():
                    if isinstance(v, list) and sum(isinstance(x, dict) for x in v) >= 2:
                        containers.append([x for x in v if isinstance(x, dict)])
            elif isinstance(node, list) and sum(isinstance(x, dict) for x in node) >= 2:
                containers.append([x for x in node if isinstance(x, dict)])
        for records in containers:
            for record in records:
                if value in {v for v in record.values() if isinstance(v, str)}:
                    return record, records
    return None


_DIGITS = re.compile(r"(?<![\w.])\d{3,6}(?![\w.])")


def _named_digits(record: dict[str, Any], user_tokens: set[str]) -> int:
    """How many short digit strings of a record (card endings, …) the user said."""
    return sum(
        1 for v in record.values() if isinstance(v, str) and v.isdigit() and 3 <= len(v) <= 6 and v in user_tokens
    )


def _changes_field(tool: str, argument: str) -> bool:
    """Whether the call sets that field anew (``modify_pending_order_address(address1=…)``,
    ``modify_pending_order_payment(payment_method_id=…)``): a word of the tool name begins the argument."""
    return argument.startswith("new_") or any(
        len(word) >= 4 and argument.startswith(word) for word in tool.split("_")[1:]
    )


def probe_precision(episode: Episode) -> ProbeLabel:
    """Write arguments must be the values the agent has to use: the record the user named by its digits
    (a card ending), else - for id arguments the call does not set anew - an id read for that field."""
    user_tokens = set(_DIGITS.findall(episode.user_text))
    checked = 0
    for call in episode.calls:
        if not is_write(call.name):
            continue
        earlier = [c.parsed for c in episode.calls[: call.index] if not c.error and c.parsed is not None]
        for argument, value in call.arguments.items():
            values = _string_values(value)
            if not values:
                continue
            named = False
            for v in values:
                found = _siblings(earlier, v) if user_tokens else None
                if found is None:
                    continue
                chosen, records = found
                best = max(_named_digits(r, user_tokens) for r in records)
                if best and _named_digits(chosen, user_tokens) < best:
                    return ProbeLabel("LACKING", f"{call.name}({argument}={v}): not the record the user named")
                named = named or best > 0
            if named:
                checked += 1
                continue
            if (
                not argument.endswith(("_id", "_ids"))
                or _changes_field(call.name, argument)
                or not all(isinstance(v, str) for v in (value if isinstance(value, list) else [value]))
            ):
                continue
            seen: set[str] = set()
            for result in earlier:
                seen |= _values_under(result, _candidate_keys(argument))
            if not seen:
                continue
            checked += 1
            wrong = [v for v in values if v not in seen]
            if wrong:
                shown = ", ".join(sorted(seen)[:4])
                return ProbeLabel(
                    "LACKING", f"{call.name}({argument}={wrong[0]}) contradicts the {argument} read: {shown}"
                )
    if not checked:
        return ProbeLabel("NA", "no write argument that could be checked against values read or named")
    return ProbeLabel("PRESENT", f"{checked} write argument(s) match the values read or named")


# ----- multi_step_task_completion --------------------------------------------------------------------
_ID_TOKEN = re.compile(r"#?[A-Za-z0-9_]*\d[A-Za-z0-9_]*")


def _shape(token: str) -> tuple[bool, int, bool, bool, bool]:
    return (
        token.startswith("#"),
        len(token),
        any(c.islower() for c in token),
        any(c.isupper() for c in token),
        "_" in token,
    )


def requested_ids(text: str) -> dict[tuple[bool, int, bool, bool, bool], list[str]]:
    """Id-like tokens (letters and digits, or a leading ``#``) the user named, grouped by shape."""
    groups: dict[tuple[bool, int, bool, bool, bool], list[str]] = {}
    for token in _ID_TOKEN.findall(text):
        if len(token) < 5 or not (token.startswith("#") or any(c.isalpha() for c in token)):
            continue
        group = groups.setdefault(_shape(token), [])
        if token not in group:
            group.append(token)
    return groups


def probe_multi_step(episode: Episode) -> ProbeLabel:
    """A compound request names several records of one kind (two reservation ids, three order ids);
    every one of them must be worked on (appear in some tool call) - stopping after part is LACKING."""
    groups = [ids for ids in requested_ids(episode.user_text).values() if len(ids) >= 2]
    if not groups:
        return ProbeLabel("NA", "the user named no several records of one kind")
    used: set[str] = set()
    for call in episode.calls:
        used |= {str(v) for v in call.arguments.values()}
        used |= {str(x) for v in call.arguments.values() if isinstance(v, list) for x in v}
    requested = [token for ids in groups for token in ids]
    untouched = [token for token in requested if token not in used and token.lstrip("#") not in used]
    if untouched:
        return ProbeLabel("LACKING", f"requested {', '.join(requested)}; never acted on {', '.join(untouched)}")
    return ProbeLabel("PRESENT", f"worked on every requested record ({', '.join(requested)})")


# ----- permission_error_recovery ---------------------------------------------------------------------
_PERMISSION = re.compile(
    r"permission|not enabled|is disabled|low battery mode|is turned off|airplane mode", re.IGNORECASE
)
"""Errors caused by a device setting: a PermissionError, or a service that is off (ToolSandbox's
``ConnectionError: Cellular service is not enabled``)."""


def probe_permission(episode: Episode) -> ProbeLabel:
    """After a permission-style tool error (a setting blocks the call), the same tool must later succeed
    (the blocking setting changed, the call retried)."""
    for call in episode.calls:
        if call.error and _PERMISSION.search(call.result or ""):
            retried = any(c.name == call.name and not c.error for c in episode.calls[call.index + 1 :])
            if retried:
                return ProbeLabel("PRESENT", f"{call.name} hit a permission error, was unblocked and retried")
            return ProbeLabel("LACKING", f"{call.name} hit a permission error that was never resolved")
    return ProbeLabel("NA", "no permission error occurred")


# ----- datetime_reasoning ----------------------------------------------------------------------------
def probe_datetime(episode: Episode) -> ProbeLabel:
    """Date parts (year/month/day arguments) need an earlier tool result giving that part, or the user's
    own words; timestamp arguments must be values a tool returned (not computed mentally)."""
    user_numbers = {float(n) for n in _NUMBER.findall(episode.user_text)}
    checked = 0
    for call in episode.calls:
        earlier = [c for c in episode.calls[: call.index] if not c.error]
        for argument, value in call.arguments.items():
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                continue
            try:
                number = float(value)
            except ValueError:
                continue
            if argument in _DATE_PARTS:
                checked += 1
                grounded = number in user_numbers or any(argument in {k for k, _ in _leaves(c.parsed)} for c in earlier)
                if not grounded:
                    return ProbeLabel(
                        "LACKING", f"{call.name}({argument}={value}) with no date tool telling the {argument}"
                    )
            elif "timestamp" in argument:
                checked += 1
                produced = {n for c in earlier for n in _numbers(c.parsed, c.result)}
                if not any(abs(number - n) < 1e-6 for n in produced) and number not in user_numbers:
                    return ProbeLabel("LACKING", f"{call.name}({argument}={value}): a timestamp no tool produced")
    if not checked:
        return ProbeLabel("NA", "no date or timestamp argument")
    return ProbeLabel("PRESENT", f"{checked} date/timestamp argument(s) came from the date-time tools")


# ----- structured_data_reasoning ---------------------------------------------------------------------
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


def _money_claims(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in _MONEY.findall(text)]


def _multi_record(value: Any) -> bool:
    """Whether a result holds several records: a list of two or more objects, or an object of objects."""
    for node in [value, *_dicts(value)]:
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
        for node in _dicts(result):
            numeric = {k: n for k, v in node.items() if (n := _as_number(v)) is not None}
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
        for node in _dicts(result):
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
        for k, v in _leaves(record)
        if isinstance(v, str) and len(v) >= 4 and any(c.isalpha() for c in v) and not (k or "").endswith(_ID_FIELDS)
    }


def _match_score(record: dict[str, Any], shared: set[str], user_text: str) -> int:
    lowered = " " + re.sub(r"[^a-z0-9]+", " ", user_text.lower()) + " "
    return sum(1 for p in _phrases(record) - shared if " " + re.sub(r"[^a-z0-9]+", " ", p).strip() + " " in lowered)


def _best_match_problem(value: str, results: list[Any], user_text: str) -> str | None:
    """When the user described the record they want by its values, the record the agent chose must
    match that description at least as well as every other record beside it."""
    found = _siblings(results, value)
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
            for v in _string_values(value):
                found = _siblings(earlier, v)
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


def probe_table() -> dict[str, Probe]:
    """The probe of every registered capability that declares one, by name (the shipped six point at the
    functions above; an env of one's own may point at its own)."""
    from trace_envs.capabilities import probes

    return probes()


def probe_labels(record: EpisodeRecord) -> dict[str, CapabilityLabel]:
    """Every probe's label on one episode."""
    episode = read_episode(record)
    return {name: as_label(name, probe(episode)) for name, probe in probe_table().items()}


def as_label(name: str, result: LabelLike) -> CapabilityLabel:
    """A probe's answer (core's ``ProbeLabel``, a ``CapabilityLabel``, …) as the capability's label."""
    if isinstance(result, CapabilityLabel) and result.capability == name:
        return result
    return CapabilityLabel(capability=name, label=Label(str(result.label)), rationale=result.rationale)
