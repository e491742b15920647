"""``Plan``: a task's reference solution, written by running the domain's real tools while the task is built.

Every value the solution states (ids, prices, totals, dates, error lines) is then the tools' own, never
recomputed by the generator, and the steps are exactly what the gold replay will run::

    plan = Plan(TOY_SHOP, ShopState(orders=orders))
    order = plan.call("get_order_details", order_id="#W1234567")
    plan.confirm(f"I will cancel order {order.order_id}. Shall I proceed?")
    plan.call("cancel_order", order_id=order.order_id)
    plan.say("Your order is cancelled.")
    return plan.task(goal="...", user=UserScript(opening="..."), required_facts=["cancelled"])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .domain import Domain
from .task import Reply, Task, UserScript
from .tools import ToolCall, Toolset


class Plan:
    """A reference solution in the making: each call runs on a scratch state under the domain's calling rules
    (the initial state is recorded as JSON first), and is recorded with the messages and the replies they
    need from the user.

    Given a state object, the plan takes it over as its scratch state (no copy: read what you need from it
    before the calls change it, or from ``plan.state`` after); given JSON data, it loads a fresh state."""

    def __init__(
        self, domain: Domain[Any], initial_state: BaseModel | Mapping[str, Any], toolset: Toolset | None = None
    ):
        self.domain = domain
        self.toolset = domain.toolset if toolset is None else toolset
        if isinstance(initial_state, BaseModel):
            self.initial_state: dict[str, Any] = domain.dump_state(initial_state)
            self.state: Any = initial_state
        else:
            self.initial_state = dict(initial_state)
            self.state = domain.load_state(self.initial_state)
        self.steps: list[ToolCall | str] = []
        self.expected_errors: list[int] = []
        self.errors: list[str] = []
        self.replies: list[Reply] = []

    def _run(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """The tool's value, or ``(False, its error line as the agent would see it)``."""
        try:
            return True, self.toolset.call(self.state, tool, arguments)
        except Exception as exc:  # the tool's failure, as the agent would see it
            return False, self.toolset.format_error(tool, exc)

    def call(self, tool: str, /, expect_error: str | None = None, **arguments: Any) -> Any:
        """Run and record one call and return its value; ``expect_error`` (the start of the error line, e.g. an
        exception class name) marks a call that must fail that way, and returns the error line."""
        self.steps.append(ToolCall.model_construct(name=tool, arguments=arguments, id=""))
        ok, value = self._run(tool, arguments)
        if expect_error is not None:
            if ok or not value.startswith(expect_error):
                raise RuntimeError(f"plan: {tool}{arguments} should fail with {expect_error}, got {value!r}")
            self.expected_errors.append(len(self.steps) - 1)
            self.errors.append(value)
        elif not ok:
            raise RuntimeError(f"plan: {tool}{arguments} failed: {value}")
        return value

    def attempt(self, tool: str, /, **arguments: Any) -> tuple[bool, Any]:
        """Run and record one call that may fail: ``(True, value)``, or ``(False, error line)`` recorded as an
        expected error."""
        self.steps.append(ToolCall.model_construct(name=tool, arguments=arguments, id=""))
        ok, value = self._run(tool, arguments)
        if not ok:
            self.expected_errors.append(len(self.steps) - 1)
            self.errors.append(value)
        return ok, value

    def peek(self, tool: str, /, **arguments: Any) -> Any:
        """Run a read-only call without recording it (a value only a flawed solution needs)."""
        ok, value = self._run(tool, arguments)
        if not ok:
            raise RuntimeError(f"plan: {tool}{arguments} failed: {value}")
        return value

    def say(self, text: str) -> str:
        """A statement to the user (the scripted user closes the conversation on it)."""
        return self._message(text, "close")

    def confirm(self, text: str) -> str:
        """A request to confirm the next change (the scripted user confirms it)."""
        return self._message(text, "confirm")

    def ask(self, text: str) -> str:
        """A question the scripted user answers from its facts (it must name one of their keys)."""
        return self._message(text, "answer")

    def _message(self, text: str, reply: Reply) -> str:
        self.steps.append(text)
        self.replies.append(reply)
        return text

    def task(self, *, user: UserScript, **fields: Any) -> Task:
        """The task: this plan's initial state, steps, expected errors and the replies its messages need
        (added to ``user``), plus ``fields`` (goal, required_facts, flawed_solution, ...)."""
        if user.replies and user.replies != self.replies:
            raise ValueError(f"user.replies {user.replies} differs from the plan's messages' {self.replies}")
        return Task(
            initial_state=self.initial_state,
            user=user.model_copy(update={"replies": list(self.replies)}),
            solution=list(self.steps),
            expected_errors=list(self.expected_errors),
            **fields,
        )
