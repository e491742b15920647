"""Compare a flawed solution with the reference step by step (evidence for the capability check).

A step is one action string: a tool call (compared by name and arguments, whatever its formatting) or a
message to the user (compared after collapsing whitespace). The steps the two solutions do not share
are the ones that exercise the capability; the steps they share show that the flawed solution still
does the rest of the task. A near miss keeps the reference's steps up to the skipped capability: where the two
first part, the flawed solution leaves a reference step out (or replaces it); it does not add a step of its own
before anything is skipped.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from trace_envs.core import parse_action

SHOWN_STEPS = 4
STEP_CHARS = 160


class StepDiff(BaseModel):
    """How one seed's flawed solution differs from its reference solution."""

    shared: int = Field(description="Reference steps the flawed solution keeps, in order.")
    reference_steps: int
    flawed_steps: int
    flawed_tool_calls: int = Field(description="Tool calls the flawed solution makes.")
    flawed_calls_on_reference_records: int = Field(
        default=0, description="Of those, calls with an argument value the reference's calls also pass (same records)."
    )
    first_difference: str = Field(
        default="skips",
        description="Where the two first part: 'skips' (a reference step left out or replaced), 'adds' (a step "
        "of its own before any is skipped) or 'none' (it keeps every reference step).",
    )
    diverges_at: int = Field(default=0, description="Reference steps kept in order before the two first part.")
    reference_only: list[str] = Field(default_factory=list, description="Reference steps it leaves out (clipped).")
    flawed_only: list[str] = Field(default_factory=list, description="Steps only it takes (clipped).")

    @property
    def attempts_task(self) -> bool:
        """Whether it attempts the task: keeps a reference step, or acts on the records the reference acts on
        (a call passing one of the reference's argument values). A call to an unrelated tool, or on other
        records, is not an attempt: junk does neither."""
        return self.shared > 0 or self.flawed_calls_on_reference_records > 0

    @property
    def near_miss(self) -> bool:
        """It attempts the task and keeps the reference's steps up to the skipped capability."""
        return self.attempts_task and self.first_difference == "skips"


def step_key(action: str) -> str:
    """A canonical form of one action: ``call name {arguments}`` or ``say <text>``."""
    parsed = parse_action(action)
    if parsed.tool_calls:
        calls = [f"{c.name} {json.dumps(c.arguments, sort_keys=True, ensure_ascii=False)}" for c in parsed.tool_calls]
        return "call " + "; ".join(calls)
    return "say " + " ".join(str(action).split())


def _argument_values(value: object) -> set[str]:
    """Every scalar inside a call's arguments, as canonical JSON (an order id, a flight number, a date)."""
    if isinstance(value, dict):
        return set().union(*(_argument_values(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_argument_values(item) for item in value))
    return {json.dumps(value, sort_keys=True)}


def _calls_on_records(reference: Sequence[str], flawed: Sequence[str]) -> int:
    """How many of the flawed solution's calls pass an argument value that a reference call passes."""
    values: set[str] = set()
    for action in reference:
        for call in parse_action(action).tool_calls:
            values |= _argument_values(call.arguments)
    calls = [call for action in flawed for call in parse_action(action).tool_calls]
    return sum(bool(_argument_values(call.arguments) & values) for call in calls)


def _clip(text: str) -> str:
    return text if len(text) <= STEP_CHARS else text[: STEP_CHARS - 1] + "…"


def compare_steps(reference: Sequence[str], flawed: Sequence[str]) -> StepDiff:
    """The longest in-order match of the two step lists, and what each does that the other does not."""
    ours, theirs = [step_key(a) for a in reference], [step_key(a) for a in flawed]
    matcher = difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks())
    reference_only: list[str] = []
    flawed_only: list[str] = []
    opcodes = matcher.get_opcodes()
    first = next(((tag, a0) for tag, a0, _, _, _ in opcodes if tag != "equal"), None)
    for tag, a0, a1, b0, b1 in opcodes:
        if tag in ("delete", "replace"):
            reference_only += ours[a0:a1]
        if tag in ("insert", "replace"):
            flawed_only += theirs[b0:b1]
    return StepDiff(
        shared=shared,
        reference_steps=len(ours),
        flawed_steps=len(theirs),
        flawed_tool_calls=sum(len(parse_action(a).tool_calls) for a in flawed),
        flawed_calls_on_reference_records=_calls_on_records(reference, flawed),
        first_difference="none" if not reference_only else ("adds" if first and first[0] == "insert" else "skips"),
        diverges_at=len(ours) if first is None else first[1],
        reference_only=[_clip(s) for s in reference_only[:SHOWN_STEPS]],
        flawed_only=[_clip(s) for s in flawed_only[:SHOWN_STEPS]],
    )
