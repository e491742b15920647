"""Offline probes: programmatic labellers for the six shipped capabilities. Each reads only what
the agent did (messages, tool calls with arguments, tool results and errors) - never the env id,
the policy, the task id or the outcome - and returns NA / PRESENT / LACKING with a rationale.

They make the pipeline runnable without a model (analyst ``probes``) and let an analyst's labels be
checked against them (:mod:`trace_envs.analysis.agreement`). They are heuristics with known blind
spots (see docs/analysis.md), deliberately specific: a probe fires on the failure pattern of its
capability and stays NA where that pattern cannot occur.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

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
    import trace_envs  # noqa: F401 - registers the built-in domains
    from trace_envs.core.domain import get_domain
    from trace_envs.registration import BUILTIN_DOMAINS

    kinds: dict[str, str] = {}
    for name in BUILTIN_DOMAINS:
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


@dataclass
class Call:
    """One tool call with its result, in episode order."""

    index: int
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    error: bool = False
    parsed: Any = None


@dataclass
class Episode:
    """The parts of an episode the probes read."""

    calls: list[Call] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    agent_texts: list[tuple[int, str]] = field(default_factory=list)  # (calls made before it, text)

    @property
    def user_text(self) -> str:
        return "\n".join(self.user_texts)


def _parse(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def read_episode(record: EpisodeRecord) -> Episode:
    """Calls (with results matched by id), user messages and agent messages, in order."""
    episode = Episode()
    by_id: dict[str, Call] = {}
    for message in record.messages:
        role = message.get("role")
        if role == "user":
            episode.user_texts.append(str(message.get("content") or ""))
        elif role == "assistant":
            if message.get("content"):
                episode.agent_texts.append((len(episode.calls), str(message["content"])))
            for raw in message.get("tool_calls") or []:
                call = Call(len(episode.calls), str(raw.get("name", "")), dict(raw.get("arguments") or {}))
                episode.calls.append(call)
                by_id[str(raw.get("id", ""))] = call
        elif role == "tool":
            target = by_id.get(str(message.get("id", "")))
            if target is not None:
                target.result = None if message.get("content") is None else str(message.get("content"))
                target.error = bool(message.get("error"))
                target.parsed = _parse(target.result)
    return episode


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


def _numbers(value: Any, raw: str | None = None) -> list[float]:
    out = [float(v) for _, v in _leaves(value) if isinstance(v, int | float) and not isinstance(v, bool)]
    if value is None and raw:
        out += [float(m) for m in _NUMBER.findall(raw)]
    return out


def _label(name: str, label: Label, rationale: str) -> CapabilityLabel:
    return CapabilityLabel(capability=name, label=label, rationale=rationale)


# ----- precondition_verification ---------------------------------------------------------------------
def probe_precondition(episode: Episode) -> CapabilityLabel:
    """A write aimed at a record (an ``…_id`` argument) must come after a read of that record: a read
    call with the id among its arguments, or a search/find result that returned it."""
    name = "precondition_verification"
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
            return _label(name, Label.LACKING, f"{call.name}({key}={target}) made without first looking up {target}")
    if not checked:
        return _label(name, Label.NA, "no state-changing call aimed at a record")
    return _label(name, Label.PRESENT, f"each of {checked} record-changing call(s) followed a lookup of the record")


# ----- tool_calling_precision ------------------------------------------------------------------------
def _candidate_keys(argument: str) -> set[str]:
    keys = {argument}
    if argument.endswith("s"):
        keys.add(argument[:-1])
    return keys


def probe_precision(episode: Episode) -> CapabilityLabel:
    """Every string (or list-of-strings) argument of a write call whose field the agent had read
    before (same key, or its singular, in an earlier tool result) must be one of the values read."""
    name = "tool_calling_precision"
    checked = 0
    for call in episode.calls:
        if not is_write(call.name):
            continue
        earlier = [c.parsed for c in episode.calls[: call.index] if not c.error and c.parsed is not None]
        for argument, value in call.arguments.items():
            values = value if isinstance(value, list) else [value]
            if not values or not all(isinstance(v, str) for v in values):
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
                return _label(
                    name, Label.LACKING, f"{call.name}({argument}={wrong[0]}) contradicts the {argument} read: {shown}"
                )
    if not checked:
        return _label(name, Label.NA, "no write argument that could be checked against values read")
    return _label(name, Label.PRESENT, f"{checked} write argument(s) match the values read")


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


def probe_multi_step(episode: Episode) -> CapabilityLabel:
    """A compound request names several records of one kind (two reservation ids, three order ids);
    every one of them must be worked on (appear in some tool call) - stopping after part is LACKING."""
    name = "multi_step_task_completion"
    groups = [ids for ids in requested_ids(episode.user_text).values() if len(ids) >= 2]
    if not groups:
        return _label(name, Label.NA, "the user named no several records of one kind")
    used: set[str] = set()
    for call in episode.calls:
        used |= {str(v) for v in call.arguments.values()}
        used |= {str(x) for v in call.arguments.values() if isinstance(v, list) for x in v}
    requested = [token for ids in groups for token in ids]
    untouched = [token for token in requested if token not in used and token.lstrip("#") not in used]
    if untouched:
        return _label(name, Label.LACKING, f"requested {', '.join(requested)}; never acted on {', '.join(untouched)}")
    return _label(name, Label.PRESENT, f"worked on every requested record ({', '.join(requested)})")


# ----- permission_error_recovery ---------------------------------------------------------------------
_PERMISSION = re.compile(r"permission", re.IGNORECASE)


def probe_permission(episode: Episode) -> CapabilityLabel:
    """After a permission-style tool error, the same tool must later succeed (blocker fixed, retried)."""
    name = "permission_error_recovery"
    for call in episode.calls:
        if call.error and _PERMISSION.search(call.result or ""):
            retried = any(c.name == call.name and not c.error for c in episode.calls[call.index + 1 :])
            if retried:
                return _label(name, Label.PRESENT, f"{call.name} hit a permission error, was unblocked and retried")
            return _label(name, Label.LACKING, f"{call.name} hit a permission error that was never resolved")
    return _label(name, Label.NA, "no permission error occurred")


# ----- datetime_reasoning ----------------------------------------------------------------------------
def probe_datetime(episode: Episode) -> CapabilityLabel:
    """Date parts (year/month/day arguments) need an earlier tool result giving that part, or the user's
    own words; timestamp arguments must be values a tool returned (not computed mentally)."""
    name = "datetime_reasoning"
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
                    return _label(
                        name, Label.LACKING, f"{call.name}({argument}={value}) with no date tool telling the {argument}"
                    )
            elif "timestamp" in argument:
                checked += 1
                produced = {n for c in earlier for n in _numbers(c.parsed, c.result)}
                if not any(abs(number - n) < 1e-6 for n in produced) and number not in user_numbers:
                    return _label(name, Label.LACKING, f"{call.name}({argument}={value}): a timestamp no tool produced")
    if not checked:
        return _label(name, Label.NA, "no date or timestamp argument")
    return _label(name, Label.PRESENT, f"{checked} date/timestamp argument(s) came from the date-time tools")


# ----- structured_data_reasoning ---------------------------------------------------------------------
_CLAIM_NOISE = re.compile(
    r"#?[A-Za-z_]*\d+[A-Za-z_]+[A-Za-z0-9_]*|#\S+|[A-Za-z_]+\d[A-Za-z0-9_]*|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}"
)
_CLAIM = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _claims(text: str) -> list[float]:
    cleaned = _CLAIM_NOISE.sub(" ", text)
    out = []
    for token in _CLAIM.findall(cleaned):
        number = float(token.replace(",", ""))
        if "." in token or number > 10:
            out.append(number)
    return out


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
    lowered = " " + re.sub(r"[^a-z0-9]+", " ", text.lower()) + " "
    found = set()
    for key in sorted(keys, key=len, reverse=True):
        phrase = " " + key.replace("_", " ").lower() + " "
        if phrase.strip() and phrase in lowered:
            found.add(key)
            lowered = lowered.replace(phrase, " ")
    return found


def _grounded(number: float, results: list[Any], user_text: str) -> tuple[bool, str]:
    """Whether a number the agent stated is supported by the records (and read from the field the
    user asked about)."""
    matches: list[tuple[str, set[str]]] = []
    for result in results:
        for node in _dicts(result):
            numeric = {k for k, v in node.items() if isinstance(v, int | float) and not isinstance(v, bool)}
            for key in numeric:
                if abs(float(node[key]) - number) < 0.005:
                    matches.append((key, numeric))
    if matches:
        for key, siblings in matches:
            mentioned = _mentioned(siblings, user_text)
            if not mentioned or key in mentioned:
                return True, ""
        key, siblings = matches[0]
        wanted = sorted(_mentioned(siblings, user_text))
        return False, f"{number:g} is the {key!r} value but the user asked about {', '.join(wanted)}"
    pool = sorted({n for r in results for n in _numbers(r)} | {float(n) for n in _NUMBER.findall(user_text)})
    pool = pool[:200]
    for i, a in enumerate(pool):
        for b in pool[i:]:
            if any(abs(number - x) < 0.005 for x in (a + b, abs(a - b), a * b)):
                return True, ""
    for result in results:
        by_key: dict[str | None, float] = {}
        for key, v in _leaves(result):
            if isinstance(v, int | float) and not isinstance(v, bool):
                by_key[key] = by_key.get(key, 0.0) + float(v)
        if any(abs(total - number) < 0.005 for total in by_key.values()):
            return True, ""
    return False, f"{number:g} appears in no record and follows from none"


def probe_structured(episode: Episode) -> CapabilityLabel:
    """When the agent read several nested records, every number it tells the user must be a value of
    the right field of those records (or a sum/difference/product of values read)."""
    name = "structured_data_reasoning"
    results = [c.parsed for c in episode.calls if not c.error and c.parsed is not None]
    if not any(_multi_record(r) for r in results):
        return _label(name, Label.NA, "no tool returned several nested records")
    claims = 0
    for calls_before, text in episode.agent_texts:
        seen = [c.parsed for c in episode.calls[:calls_before] if not c.error and c.parsed is not None]
        for number in _claims(text):
            claims += 1
            ok, why = _grounded(number, seen, episode.user_text)
            if not ok:
                return _label(name, Label.LACKING, f"told the user {why}")
    if claims:
        return _label(name, Label.PRESENT, f"{claims} number(s) told to the user match the records read")
    writes = [c for c in episode.calls if is_write(c.name)]
    if writes:
        return _label(name, Label.PRESENT, "read nested records and acted on one of them")
    return _label(name, Label.NA, "read nested records but neither reported values nor acted")


PROBES: dict[str, Callable[[Episode], CapabilityLabel]] = {
    "structured_data_reasoning": probe_structured,
    "tool_calling_precision": probe_precision,
    "multi_step_task_completion": probe_multi_step,
    "precondition_verification": probe_precondition,
    "permission_error_recovery": probe_permission,
    "datetime_reasoning": probe_datetime,
}
"""Probe of each known capability, by its shipped name."""


def probe_labels(record: EpisodeRecord) -> dict[str, CapabilityLabel]:
    """Every probe's label on one episode."""
    episode = read_episode(record)
    return {name: probe(episode) for name, probe in PROBES.items()}
