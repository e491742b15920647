"""The capabilities our shipped envs train (names shared by analysis, env metadata, adapters and
router labels), with the descriptions the offline probes and discovery use."""

from __future__ import annotations

from .models import CapabilityDef, CapabilityDictionary

KNOWN_CAPABILITIES: dict[str, str] = {
    "structured_data_reasoning": (
        "Reading nested structured records returned by tools (per-cabin price tables, flight routings, item "
        "variants with options) and searching, filtering and cross-referencing them to find the one record or "
        "value that satisfies the user's constraints; lacking when the agent reports or uses a value from the "
        "wrong record or field, or a number that the records do not support."
    ),
    "tool_calling_precision": (
        "Calling the right tool with exactly the right arguments when near-miss values are present: the "
        "order's own payment method rather than another one on the profile, the right item id among variants; "
        "lacking when an argument contradicts the value the agent has just read for that field."
    ),
    "multi_step_task_completion": (
        "Carrying a compound request (several sub-tasks in one conversation) through to the end without being "
        "reminded; lacking when the agent completes part of the request and then stops or closes the "
        "conversation with sub-tasks left untouched."
    ),
    "precondition_verification": (
        "Checking that a state-changing request is allowed by the policy before acting (looking up the "
        "record's status, membership, fare class, timing) and refusing when it is not; lacking when a write "
        "action is made without the lookups those checks need."
    ),
    "permission_error_recovery": (
        "Recovering from a permission-style tool error caused by a device setting (low battery mode, a "
        "disabled service): finding the blocking setting, changing it, retrying the original call and telling "
        "the user; lacking when the agent reports the error instead of resolving it."
    ),
    "datetime_reasoning": (
        "Working out relative dates and times (tomorrow 5 PM, days until a holiday, the current year) with the "
        "date-time tools instead of decoding raw timestamps mentally; lacking when a date, year or timestamp "
        "is used that no tool produced and the user did not give."
    ),
}


def known_dictionary() -> CapabilityDictionary:
    """The six shipped capabilities as a dictionary (what the ``probes`` analyst labels)."""
    return CapabilityDictionary(
        capabilities=[CapabilityDef(name=name, description=text) for name, text in KNOWN_CAPABILITIES.items()]
    )
