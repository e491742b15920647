"""The probe of date-time reasoning: dates and timestamps must come from the date tools."""

from __future__ import annotations

from trace_envs.domains.probing import Episode, ProbeLabel

from .kit import DATE_PARTS, NUMBER, leaves, numbers


def probe_datetime(episode: Episode) -> ProbeLabel:
    """Date parts (year/month/day arguments) need an earlier tool result giving that part, or the user's
    own words; timestamp arguments must be values a tool returned (not computed mentally)."""
    user_numbers = {float(n) for n in NUMBER.findall(episode.user_text)}
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
            if argument in DATE_PARTS:
                checked += 1
                grounded = number in user_numbers or any(argument in {k for k, _ in leaves(c.parsed)} for c in earlier)
                if not grounded:
                    return ProbeLabel(
                        "LACKING", f"{call.name}({argument}={value}) with no date tool telling the {argument}"
                    )
            elif "timestamp" in argument:
                checked += 1
                produced = {n for c in earlier for n in numbers(c.parsed, c.result)}
                if not any(abs(number - n) < 1e-6 for n in produced) and number not in user_numbers:
                    return ProbeLabel("LACKING", f"{call.name}({argument}={value}): a timestamp no tool produced")
    if not checked:
        return ProbeLabel("NA", "no date or timestamp argument")
    return ProbeLabel("PRESENT", f"{checked} date/timestamp argument(s) came from the date-time tools")
