"""One part of a compound customer request (the multi-step env's sub-task): reads, a confirmation, one write.

A part is built in two phases so that its values are the tools' own: ``draw`` (in each domain's
``requests`` module) adds its records to the task's database with the task's ``rng``; once the database
is complete, the returned :data:`Part` carries it out on the task's :class:`~trace_envs.core.Plan`, reading
the records with the real tools and stating what they return (refunds, prices, bag counts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core import Plan, ToolCall


class SubTask(BaseModel):
    """One part of the compound request: what the customer asks, the calls that do it, what to say."""

    kind: str
    request: str
    reads: list[ToolCall]
    confirm: str
    write: ToolCall
    done: str
    facts: list[str] = Field(default_factory=list)


Part = Callable[[Plan, Any], SubTask]
"""A drawn part, carried out on the plan; its second argument is what the customer's identifying read
returned (the airline user record, or the retail user id)."""


def finish_part(
    plan: Plan, start: int, kind: str, texts: tuple[str, str, str], write: tuple[str, dict[str, Any]], **values: Any
) -> SubTask:
    """Close a part whose reads were planned from step ``start``: confirm (``texts`` filled with ``values``,
    ending "Shall I proceed?"), then plan the write; ``texts`` are the request, confirmation and summary."""
    request, confirm, done = (text.format(**values) for text in texts)
    reads = [step for step in plan.steps[start:] if isinstance(step, ToolCall)]
    confirm = plan.confirm(confirm + " Shall I proceed?")
    name, arguments = write
    plan.call(name, **arguments)
    written = plan.steps[-1]
    assert isinstance(written, ToolCall)
    return SubTask(kind=kind, request=request, reads=reads, confirm=confirm, write=written, done=done)
