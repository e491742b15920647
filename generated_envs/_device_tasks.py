"""Shared pieces of the device-side capability envs (permission recovery, date-time reasoning).

* :class:`Plan` writes a reference solution by running every call on a scratch world with the real
  device tools, so every value the solution states is the tools' own. A call may be *expected* to
  fail (the permission error the agent must recover from); the plan records its index.
* :class:`DeviceTaskEnv` is a ``CapabilityEnv`` over the real ``device`` domain whose gold replay
  accepts those expected failures (and only those), and whose fact matching does not let a number
  match inside a longer one ("23 days" is not told by "-823 days").
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from trace_envs.core import CapabilityEnv, Domain, ToolCall, ToolResult, Toolset
from trace_envs.core.env import normalize_fact_text
from trace_envs.domains.device import DEVICE, POLICY, DeviceState, DeviceToolset

TOOLSET = DEVICE.toolset
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class Plan:
    """A reference solution built by running each call on ``state`` (a scratch copy of the world)."""

    def __init__(self, state: DeviceState):
        self.state = state
        self.steps: list[ToolCall | str] = []
        self.expected_errors: list[int] = []
        self.errors: list[str] = []

    def _run(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """The tool under the device calling rules (binding, type checks, error lines), without the trace
        that ``DeviceToolset.execute`` builds: a plan only needs values."""
        self.steps.append(ToolCall.model_construct(name=tool, arguments=arguments, id=""))
        item = TOOLSET[tool]
        try:
            return True, item.fn(self.state, **TOOLSET.bind(item, arguments))
        except Exception as exc:  # the tool's failure, as the agent would see it
            return False, TOOLSET.format_error(tool, exc)

    def call(self, tool: str, /, expect_error: str | None = None, **arguments: Any) -> Any:
        """Run one call; ``expect_error`` (an exception class name) marks a call that must fail that way."""
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
        """Run one call that may fail: ``(True, value)``, or ``(False, error line)`` recorded as an expected error."""
        ok, value = self._run(tool, arguments)
        if not ok:
            self.expected_errors.append(len(self.steps) - 1)
            self.errors.append(value)
        return ok, value

    def say(self, text: str) -> str:
        self.steps.append(text)
        return text


_PROMPTS: dict[type, str] = {}


def fact_pattern(fact: str) -> re.Pattern[str]:
    """The normalised fact as a regex; a fact that starts (ends) with a digit may not be preceded by a
    digit, point or minus sign (followed by a digit), so numbers only match whole numbers."""
    text = normalize_fact_text(fact)
    left = r"(?<![0-9.\-])" if text[:1].isdigit() else ""
    right = r"(?![0-9])" if text[-1:].isdigit() else ""
    return re.compile(left + re.escape(text) + right)


class UntracedDeviceToolset(DeviceToolset):
    """The device toolset whose ``invoke`` skips the tool trace (a JSON dump per call that only the
    milestone evaluation of ``trace/device-v0`` reads). Same tools, binding, results and errors."""

    def invoke(self, state: Any, call: ToolCall) -> ToolResult:
        item = self._tools.get(call.name)
        if item is None:
            return ToolResult(call_id=call.id, name=call.name, content=self.unknown_tool(call.name), error=True)
        try:
            value = item.fn(state, **self.bind(item, call.arguments))
        except Exception as exc:  # the tool's failure is the agent's observation
            return ToolResult(call_id=call.id, name=call.name, content=self.format_error(call.name, exc), error=True)
        return ToolResult(call_id=call.id, name=call.name, content=self.format_result(value), error=False)


def untraced(toolset: Toolset) -> UntracedDeviceToolset:
    """The same tools (same order, same schemas) with the trace-free ``invoke``."""
    if not isinstance(toolset, DeviceToolset):
        raise TypeError(f"untraced() needs a DeviceToolset, got {type(toolset).__name__}")
    clone = object.__new__(UntracedDeviceToolset)
    clone.__dict__.update(toolset.__dict__)
    return clone


class DeviceTaskEnv(CapabilityEnv):
    """A capability env over the real device domain (its tools, state tables and calling rules)."""

    domain: Domain[Any] = DEVICE

    def __init__(self, seed: int | None = None, render_mode: str | None = None, **knobs: Any):
        super().__init__(seed=seed, render_mode=render_mode, **knobs)
        self.toolset = untraced(self.toolset)

    policy = POLICY + (
        "\n- When you changed a setting to get a request done, tell the user which setting you changed."
        "\n- Write dates for the user as month name and day, for example March 27."
    )

    def system_prompt(self) -> str:
        """Rendered once per class: instructions and policy are class constants."""
        cls = type(self)
        cached = _PROMPTS.get(cls)
        if cached is None:
            cached = _PROMPTS[cls] = super().system_prompt()
        return cached

    def gold_hash(self) -> str:
        """The reference replayed on a fresh world; exactly the calls the task marks as expected errors fail."""
        if self._gold_hash is None:
            task = self._require_task()
            expected = set(task.metadata.get("expected_errors", []))
            gold = self.domain.load_state(task.initial_state)
            for index, step in enumerate(task.solution):
                if isinstance(step, ToolCall):
                    result = self.toolset.invoke(gold, step)
                    if result.error != (index in expected):
                        raise RuntimeError(
                            f"{type(self).__name__}: reference step {index} ({step.name}) on task {task.task_id} "
                            f"{'failed' if result.error else 'should fail but succeeded'}: {result.content}"
                        )
            self._gold_hash = self.domain.state_hash(gold)
        return self._gold_hash

    def facts_told(self) -> dict[str, bool]:
        """tau2's matching (lower case, commas dropped, substring) with whole-number boundaries."""
        task = self._require_task()
        said = " ".join(
            normalize_fact_text(m["content"])
            for m in self.messages
            if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls")
        )
        return {fact: fact_pattern(fact).search(said) is not None for fact in task.required_facts}


def local_datetime(state: DeviceState, timestamp: float) -> dt.datetime:
    """What ``timestamp_to_datetime_info`` reads: the timestamp in the device's fixed UTC offset."""
    zone = dt.timezone(dt.timedelta(seconds=state.SIMULATION.utc_offset_seconds))
    return dt.datetime.fromtimestamp(timestamp, tz=zone)


def date_text(day: dt.date) -> str:
    """ "March 27": how dates are told to the user (and matched as facts)."""
    return f"{MONTHS[day.month - 1]} {day.day}"


def time_text(hour: int, minute: int) -> str:
    """ "5 PM", "8:30 AM"."""
    shown = hour % 12 or 12
    suffix = "AM" if hour < 12 else "PM"
    return f"{shown} {suffix}" if minute == 0 else f"{shown}:{minute:02d} {suffix}"
