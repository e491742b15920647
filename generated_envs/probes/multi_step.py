"""The probe of multi-step task completion: every record the user named must be worked on."""

from __future__ import annotations

import re

from trace_envs.domains.probing import Episode, ProbeLabel

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
