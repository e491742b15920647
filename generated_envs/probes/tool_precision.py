"""The probe of tool-calling precision: write arguments must be the values read or named."""

from __future__ import annotations

import re
from typing import Any

from trace_envs.domains.probing import Episode, ProbeLabel

from .kit import is_write, record_and_siblings, string_values, values_under


def _candidate_keys(argument: str) -> set[str]:
    keys = {argument}
    if argument.endswith("s"):
        keys.add(argument[:-1])
    return keys


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
            values = string_values(value)
            if not values:
                continue
            named = False
            for v in values:
                found = record_and_siblings(earlier, v) if user_tokens else None
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
                seen |= values_under(result, _candidate_keys(argument))
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
