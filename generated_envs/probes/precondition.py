"""The probe of precondition verification: a write aimed at a record must follow a lookup of it."""

from __future__ import annotations

from trace_envs.domains.probing import Episode, ProbeLabel

from .kit import all_scalars, is_write


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
            found = before.name.startswith(("search", "find")) and target in all_scalars(before.parsed)
            looked_up = looked_up or in_arguments or found
        if not looked_up:
            return ProbeLabel("LACKING", f"{call.name}({key}={target}) made without first looking up {target}")
    if not checked:
        return ProbeLabel("NA", "no state-changing call aimed at a record")
    return ProbeLabel("PRESENT", f"each of {checked} record-changing call(s) followed a lookup of the record")
