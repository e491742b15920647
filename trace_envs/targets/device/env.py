"""``trace/device-v0``: ToolSandbox-style device scenarios as a Gymnasium env scored by milestones.

Each episode plays one scenario (generated from the seed by default, or a built-in/user scenario).
The env records ToolSandbox's message log (SANDBOX rows: the agent's tool-call code, the execution
environment's ``repr`` answers with tool traces, messages to and from the user) and the world's
tables after every message, and ``verify()`` scores that trajectory with the scenario's milestones
and minefields: ``reward = similarity`` in [0, 1], ``success`` only at similarity 1.0.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import (
    STOP_TOKEN,
    Capability,
    CapabilityEnv,
    ScriptedUser,
    Task,
    ToolCall,
    User,
    Verdict,
)
from trace_envs.core.conversation import tool_calls_message, tool_result_message
from trace_envs.domains.device import AGENT_TOOLSET, DEVICE, DeviceToolset, call_code, dump_world
from trace_envs.llm_user import UserModel

from .builtin import builtin_pool
from .generator import generate_scenario
from .milestones import EvaluationResult, SandboxMessage, Trajectory, evaluate
from .scenario import DeviceScenario
from .user import device_user

DEVICE_INSTRUCTION = (
    "You are an assistant that operates the user's phone through tools.\n"
    "In each turn you can either:\n"
    "- Send a message to the user.\n"
    "- Make a tool call.\n"
    "You cannot do both at the same time.\n"
    "\n"
    "Follow the policy below. Always make sure you generate valid JSON only."
)


MAX_PERMUTED_CALLS = 5
"""Parallel call sets up to this size are checked in every order (5! = 120 trial runs); larger sets run as given."""


class DeviceKnobs(BaseModel):
    """Which scenarios ``reset(seed=s)`` plays."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["generated", "builtin"] = Field(
        default="generated", description="'generated': a new seeded scenario per seed; 'builtin': a shipped one."
    )
    split: Literal["train", "test", "all"] = Field(default="all", description="Built-in split to draw from.")
    scenario: str | None = Field(default=None, description="Always play this built-in scenario (by name).")
    zero_on_unknown_tool: bool = Field(
        default=True,
        description="Score 0 when the agent calls a tool it was not offered (upstream aborts such runs with 0).",
    )


def scenario_task(scenario: DeviceScenario, task_id: str = "") -> Task:
    """A core ``Task`` for a scenario (the scenario itself travels in ``metadata['scenario']``)."""
    return Task(
        task_id=task_id,
        initial_state=scenario.initial_world(),
        goal=scenario.user_goal,
        user=scenario.user,
        solution=list(scenario.reference_solution),
        metadata={"scenario": scenario.model_dump(mode="json", exclude_none=True)},
    )


class DeviceEnv(CapabilityEnv[DeviceKnobs]):
    """ToolSandbox-style device tasks; reward = milestone similarity (see ``milestones``)."""

    capability = Capability(
        name="device_tool_use",
        description="Complete phone tasks with stateful tools: settings, contacts, messages, reminders, "
        "date-time arithmetic and online lookups, recovering from errors caused by device state.",
    )
    domain = DEVICE
    max_turns = 30
    instructions = DEVICE_INSTRUCTION

    def __init__(
        self,
        seed: int | None = None,
        render_mode: str | None = None,
        scenarios: Sequence[DeviceScenario] | None = None,
        user_model: UserModel | None = None,
        **knobs: Any,
    ):
        super().__init__(seed=seed, render_mode=render_mode, user_model=user_model, **knobs)
        self.scenarios = [DeviceScenario.model_validate(s) for s in scenarios] if scenarios else None
        self.scenario: DeviceScenario | None = None
        self.sandbox: list[SandboxMessage] = []
        self.snapshots: list[dict[str, Any]] = []
        self.first_user = 0
        self.unknown_tool_called = False
        self.last_evaluation: EvaluationResult | None = None
        self._scenario_gold: str | None = None  # per scenario, not the class-wide cache: ``scenarios=`` varies

    # ----- tasks -------------------------------------------------------------------------------------
    def generate(self, rng: random.Random) -> Task:
        knobs = self.knobs
        if self.scenarios:
            scenario = self.scenarios[rng.randrange(len(self.scenarios))]
        elif knobs.scenario is not None:
            matches = [s for s in builtin_pool("all") if s.name == knobs.scenario]
            if not matches:
                raise ValueError(f"unknown built-in scenario {knobs.scenario!r}; see builtin_scenarios()")
            scenario = matches[0]
        elif knobs.source == "builtin":
            pool = builtin_pool(knobs.split)
            scenario = pool[rng.randrange(len(pool))]
        else:
            scenario = generate_scenario(rng)
        self.scenario = scenario
        return scenario_task(scenario, task_id="" if scenario.name.startswith("generated_") else scenario.name)

    def make_user(self, task: Task) -> User:
        if self.user_model is not None:
            return device_user(self.user_model, task.goal, task.user)
        return ScriptedUser(task.user)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        self._scenario_gold = None
        scenario = self.scenario
        assert scenario is not None and self.task is not None
        self.toolset = AGENT_TOOLSET.subset(scenario.tools)
        self.tool_schemas = self.toolset.schemas()
        info["tools"] = self.tool_schemas
        info["scenario"] = scenario.name
        info["categories"] = list(scenario.categories)
        tables = dump_world(self.state)
        self.sandbox = [
            SandboxMessage(
                sender="SYSTEM", recipient="AGENT", content=self.system_prompt(), visible_to=["SYSTEM", "AGENT"]
            ),
            SandboxMessage(
                sender="SYSTEM", recipient="USER", content=scenario.user_goal, visible_to=["SYSTEM", "USER"]
            ),
            SandboxMessage(sender="USER", recipient="AGENT", content=observation, visible_to=["USER", "AGENT"]),
        ]
        self.snapshots = [tables, tables, tables]
        self.first_user = 2
        self.unknown_tool_called = False
        self.last_evaluation = None
        return observation, info

    # ----- transitions -----------------------------------------------------------------------------
    def _record(self, message: SandboxMessage, changed: bool = False) -> None:
        self.sandbox.append(message)
        self.snapshots.append(dump_world(self.state) if changed else self.snapshots[-1])

    def run_tool_calls(self, calls: list[ToolCall], content: str | None) -> str:
        calls = [c if c.id else c.model_copy(update={"id": f"call_{self.turn}_{i}"}) for i, c in enumerate(calls)]
        self.messages.append(tool_calls_message(calls, content))
        toolset = self.toolset
        assert isinstance(toolset, DeviceToolset)
        for call in calls:
            self._record(
                SandboxMessage(
                    sender="AGENT",
                    recipient="EXECUTION_ENVIRONMENT",
                    content=call_code(call, call.id),
                    openai_tool_call_id=call.id,
                    openai_function_name=call.name,
                    visible_to=["AGENT", "EXECUTION_ENVIRONMENT"],
                )
            )
        contents = []
        for call in self._parallel_order(calls):
            if call.name not in toolset:
                self.unknown_tool_called = True
            outcome = toolset.execute(self.state, call)
            changed = not outcome.error and toolset[call.name].mutates
            self._record(
                SandboxMessage(
                    sender="EXECUTION_ENVIRONMENT",
                    recipient="AGENT",
                    content=outcome.result.content,
                    openai_tool_call_id=call.id,
                    openai_function_name=call.name,
                    tool_call_exception=outcome.exception,
                    tool_trace=[outcome.trace] if outcome.trace else None,
                    visible_to=["EXECUTION_ENVIRONMENT", "AGENT"],
                ),
                changed=changed,
            )
            result = outcome.result
            self.messages.append(tool_result_message(result))
            contents.append(result)
        if len(contents) == 1:
            return contents[0].content
        return "\n\n".join(f"[{r.name}] {r.content}" for r in contents)

    def _parallel_order(self, calls: list[ToolCall]) -> list[ToolCall]:
        """ToolSandbox's rule for several calls in one turn: try every order on copies of the world; if
        some order makes a call fail, that order is the one played (order-dependent sets fail)."""
        if not 1 < len(calls) <= MAX_PERMUTED_CALLS:
            return calls
        toolset = self.toolset
        world = dump_world(self.state)
        for order in itertools.permutations(calls):
            trial = self.domain.load_state(world)
            if any(toolset.invoke(trial, call).error for call in order):
                return list(order)
        return calls

    def talk(self, text: str) -> str:
        assert self.user is not None
        self.messages.append({"role": "assistant", "content": text})
        said = text.replace(STOP_TOKEN, "").strip()
        if said or STOP_TOKEN not in text:
            self._record(SandboxMessage(sender="AGENT", recipient="USER", content=said, visible_to=["AGENT", "USER"]))
        if STOP_TOKEN in text:
            self.ended = "agent_stop"
            return ""
        reply = self.user.reply(text)
        self.messages.append({"role": "user", "content": reply})
        answer = reply.replace(STOP_TOKEN, "").strip()
        if answer:
            self._record(SandboxMessage(sender="USER", recipient="AGENT", content=answer, visible_to=["USER", "AGENT"]))
        if self.user.done or STOP_TOKEN in reply:
            self.ended = "user_stop"
            self._record(
                SandboxMessage(
                    sender="USER",
                    recipient="EXECUTION_ENVIRONMENT",
                    content="end_conversation()",
                    openai_function_name="end_conversation",
                    visible_to=["USER", "EXECUTION_ENVIRONMENT"],
                )
            )
            self._record(
                SandboxMessage(
                    sender="EXECUTION_ENVIRONMENT",
                    recipient="USER",
                    content="None",
                    conversation_active=False,
                    visible_to=["EXECUTION_ENVIRONMENT", "USER"],
                )
            )
        return reply

    # ----- verification ----------------------------------------------------------------------------
    def trajectory(self) -> Trajectory:
        """The episode so far as ToolSandbox's message log with one world snapshot per message."""
        return Trajectory.model_construct(
            messages=list(self.sandbox), snapshots=list(self.snapshots), first_user=self.first_user
        )

    def gold_hash(self) -> str:
        """Hash of the world after the reference solution (its deliberately failing calls included)."""
        if self._scenario_gold is None:
            task = self.current_task
            gold = self.domain.load_state(task.initial_state)
            for step in task.solution:
                if isinstance(step, ToolCall):
                    self.toolset.invoke(gold, step)
            self._scenario_gold = self.domain.state_hash(gold)
        return self._scenario_gold

    def verify(self) -> Verdict[EvaluationResult]:
        """``reward`` = milestone similarity x [no minefield] (x [no unknown tool], by default)."""
        scenario = self.scenario
        if scenario is None:
            raise RuntimeError("call reset() first: there is no current scenario")
        result = evaluate(scenario.evaluation, self.trajectory())
        self.last_evaluation = result
        knobs = self.knobs
        similarity = 0.0 if (self.unknown_tool_called and knobs.zero_on_unknown_tool) else result.similarity
        components: dict[str, float] = {
            "similarity": similarity,
            "milestone_similarity": result.milestone_similarity,
            "minefield_similarity": result.minefield_similarity,
            "unknown_tool": float(self.unknown_tool_called),
            "turn_count": float(self.turn_count()),
        }
        for label, mapping in (("milestone", result.milestone_mapping), ("minefield", result.minefield_mapping)):
            for node, (index, value) in mapping.items():
                components[f"{label}_{node}"] = value
                components[f"{label}_{node}_message"] = float(index)
        state_hash, gold = self.domain.state_hash(self.state), self.gold_hash()
        return Verdict[EvaluationResult](
            reward=similarity,
            success=similarity == 1.0,
            hash_match=state_hash == gold,
            state_hash=state_hash,
            gold_hash=gold,
            facts_told={},
            components=components,
            details=result,
        )

    def turn_count(self) -> int:
        """Messages played after the opening, without the user's end_conversation exchange (upstream's rule)."""
        return sum(
            1
            for m in self.sandbox[self.first_user + 1 :]
            if {m.sender, m.recipient} != {"USER", "EXECUTION_ENVIRONMENT"}
        )

    def flawed_actions(self) -> list[str] | None:
        """The reference solution without its final message to the user (the task left unreported)."""
        return self.oracle_actions()[:-1]
